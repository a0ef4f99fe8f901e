/**
 * Writes a reply straight on node:http, in as few writes as it can: a JSON reply in one, a stream
 * batched per tick (`node-sse-reply.ts`). A client that stops taking its reply is closed after
 * `server.write_timeout` (`node-reply-stall.ts`). The exchange's `end` is told once the client has
 * the reply (or it was cut short), which is when the access log writes its line.
 */
import type { Logger } from "../logger.ts";
import { replyThenDrain } from "./node-drain-request.ts";
import { CLIENT_CLOSED, errorReplyOf } from "./error-reply.ts";
import type { NodeExchange } from "./node-exchange.ts";
import { endWritten, WRITE_PIECE_BYTES, WRITE_TIMEOUT_CLOSED, writeBody } from "./node-reply-stall.ts";
import { awaitingContinue } from "./node-expect-continue.ts";
import { writeSse } from "./node-sse-reply.ts";
import { JSON_TYPE, type Reply } from "./reply.ts";

/** What the writers need of the router. */
export interface ReplyWriting {
  logger: Logger;
  /** `server.write_timeout`: how long a reply may wait for its client to take more of it; 0 is no limit. */
  writeTimeoutMs: number;
}

export function writeNodeReply(w: ReplyWriting, x: NodeExchange, reply: Reply): void {
  const { res } = x;
  x.taken = true;
  if (res.destroyed) {
    // The client left while the reply was made: nobody reads it. A stream still releases its source.
    if (reply.kind === "sse") void reply.frames.return?.();
    x.end(CLIENT_CLOSED);
    return;
  }
  try {
    if (reply.kind === "sse") {
      void writeSse(w, x, reply);
      return;
    }
    const { body } = reply;
    const length = reply.kind === "json" ? Buffer.byteLength(reply.body) : (body?.length ?? 0);
    const headers: Record<string, string | number> = reply.kind === "json" ? { "content-type": JSON_TYPE, "content-length": length } : {};
    if (reply.headers) Object.assign(headers, reply.headers);
    if (reply.kind === "bytes" && body && headers["content-length"] === undefined) headers["content-length"] = length;
    if (x.requestId) headers["x-request-id"] = x.requestId;
    if (x.replyHeaders) Object.assign(headers, x.replyHeaders);
    x.repliedAt = performance.now();
    res.writeHead(reply.status, headers);
    if (length <= WRITE_PIECE_BYTES) endReply(w, x, reply.status, body ?? undefined);
    else void writeBody(res, body!, w.writeTimeoutMs).then((written) => x.end(reply.status, written ? undefined : WRITE_TIMEOUT_CLOSED));
  } catch (error) {
    // writeHead refuses a header value a plugin made (a line break): a bug, answered as a 500.
    writeNodeError(w, x, error);
  }
}

/** Ends a reply whose head is written with its whole (small) body, and ends the exchange once the client has it. */
function endReply(w: ReplyWriting, x: NodeExchange, status: number, body: string | Buffer | undefined): void {
  const written = endWritten(x.res, body, w.writeTimeoutMs);
  // The kernel took it all (every reply to a client that reads): ended now, no promise made.
  if (written === true) x.end(status);
  else void written.then((taken) => x.end(status, taken ? undefined : WRITE_TIMEOUT_CLOSED));
}

export function writeNodeError(w: ReplyWriting, x: NodeExchange, error: unknown): void {
  const { res } = x;
  x.taken = true;
  const { status, headers, body } = errorReplyOf(error, x, w.logger);
  if (!res.headersSent && !res.destroyed) {
    // A body refused while the client still sends it: the reply must reach the client first. One
    // refused before its `100 Continue` was never sent: there is nothing to drain.
    if (status === 413 && body !== null && !x.req.complete && !awaitingContinue(x.req)) replyThenDrain(x.req, res, status, headers, body, w.writeTimeoutMs);
    else {
      x.repliedAt = performance.now();
      res.writeHead(status, headers);
      endReply(w, x, status, body ?? undefined);
      return;
    }
  } else if (!res.writableEnded) res.end();
  x.end(status);
}
