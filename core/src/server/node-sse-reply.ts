/**
 * Writes an SSE reply on node:http: frames batched per tick into as few writes as possible (a whole
 * stream that arrived in one upstream read leaves in one), with the socket's backpressure, and the
 * upstream released when the client leaves early, or stops reading for `server.write_timeout`.
 */
import type { ServerResponse } from "node:http";
import type { NodeExchange } from "./node-exchange.ts";
import type { ReplyWriting } from "./node-reply.ts";
import { awaitWritten, endWritten, WRITE_TIMEOUT_CLOSED } from "./node-reply-stall.ts";
import type { SseReply } from "./reply.ts";

/** Text frames are written in batches of at most this many characters. */
const MAX_BATCH = 64 * 1024;

/**
 * Joins the text frames made in one tick and writes them with one `write()` at its end
 * (`process.nextTick` runs once the promise chain of an upstream read has settled): the frames of
 * one read (a dozen events or more) leave together, and no frame waits for a later read.
 */
class SseBatch {
  text = "";
  scheduled = false;
  /** The last write filled the socket's buffer: wait for 'drain' before reading on. */
  full = false;

  constructor(private readonly res: ServerResponse) {}

  push(text: string): void {
    this.text += text;
    if (this.text.length >= MAX_BATCH) this.flush();
    else this.schedule();
  }

  schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    process.nextTick(flushBatch, this);
  }

  flush(): void {
    this.scheduled = false;
    const { res } = this;
    if (res.writableEnded || res.destroyed) return;
    if (this.text === "") {
      // Nothing yet at the end of the first tick: the headers go alone, so the client sees the stream start.
      if (!res.headersSent) res.flushHeaders();
      return;
    }
    const text = this.text;
    this.text = "";
    if (!res.write(text)) this.full = true;
  }

  /** What is still batched, taken out (it leaves with the response's end). */
  take(): string {
    const text = this.text;
    this.text = "";
    return text;
  }
}

function flushBatch(batch: SseBatch): void {
  batch.flush();
}

/**
 * Writes the frames as they come, with backpressure; the last batch leaves with the end, in one write.
 * A wait for the client that outlasts `writeTimeoutMs` closes the connection (`node-reply-stall.ts`).
 */
export async function writeSse(w: ReplyWriting, x: NodeExchange, reply: SseReply): Promise<void> {
  const { frames } = reply;
  const { res } = x;
  const { logger, writeTimeoutMs } = w;
  x.repliedAt = performance.now();
  // One object by assignment (docs/architecture.md, "Hot paths"): a spread copy given more keys is slow.
  const head: Record<string, string> = Object.assign({}, reply.headers);
  if (x.requestId) head["x-request-id"] = x.requestId;
  if (x.replyHeaders) Object.assign(head, x.replyHeaders);
  res.writeHead(200, head);
  x.startStream();
  const batch = new SseBatch(res);
  batch.schedule();
  let complete = false;
  let written = true;
  try {
    for (;;) {
      if (res.destroyed) break;
      if (batch.full) {
        batch.full = false;
        if (res.writableNeedDrain && !(written = await awaitWritten(res, "drain", writeTimeoutMs))) break;
        continue;
      }
      const { done, value } = await frames.next();
      if (done) {
        complete = true;
        break;
      }
      if (typeof value === "string") batch.push(value);
      else {
        // Bytes relayed as they came: after the text before them, in order.
        batch.flush();
        if (!res.destroyed && !res.write(value)) batch.full = true;
      }
    }
  } catch (error) {
    // The frames never throw by contract; one that does is a bug, logged, and the stream is ended.
    logger.error(`stream of ${x.method} ${x.path} failed`, { request_id: x.requestId }, error);
  } finally {
    // Releases the upstream when the client left early or was closed for a stall.
    if (!complete) await frames.return?.();
    const rest = batch.take();
    if (!res.writableEnded && written) written = await endWritten(res, rest === "" ? undefined : rest, writeTimeoutMs);
    x.end(200, written ? undefined : WRITE_TIMEOUT_CLOSED);
  }
}
