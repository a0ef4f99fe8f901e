/**
 * Sending Server-Sent Events to the client as they are produced, with backpressure and no
 * buffering of the whole stream. On Node the frames are written to the ServerResponse directly
 * (no web streams on the hot path); through the fetch handler they go into a ReadableStream whose
 * `pull` drives the source, so a slow reader slows the upstream read.
 */
import type { ServerResponse } from "node:http";
import type { H3Event } from "h3";

/** h3's marker for "the reply was already sent on the Node response". */
const kHandled = Symbol.for("h3.handled");

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  "x-accel-buffering": "no",
};

/** What is written: frames we made (text), or an upstream's bytes relayed as they came. */
export type SseFrame = string | Uint8Array;

/** Frames one `data:` event. `data` must be one line (JSON is). */
export function sseData(data: string): string {
  return `data: ${data}\n\n`;
}

function waitForDrain(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

/** Text frames are written in batches of at most this many characters. */
const MAX_BATCH = 64 * 1024;

/**
 * Writes the frames as they come, batched per tick: the text frames made from one upstream read
 * (a dozen or more events often arrive in one) are joined and written with one `write()` at the end
 * of the tick (`process.nextTick` runs once the promise chain of that read has settled), instead of
 * one `write()` each, with its own chunk header and buffers. No frame waits for a later read, so a
 * stream's first byte is as early as before; the headers leave with the first batch, or alone at
 * the end of the first tick if no frame is ready by then.
 */
async function writeToNode(res: ServerResponse, headers: Record<string, string>, frames: AsyncIterator<SseFrame>): Promise<symbol> {
  res.writeHead(200, headers);
  let batch = "";
  let scheduled = false;
  let full = false; // the last write filled the socket's buffer: wait for 'drain' before reading on
  const flush = () => {
    scheduled = false;
    if (batch === "") {
      if (!res.headersSent && !res.destroyed) res.flushHeaders();
      return;
    }
    const text = batch;
    batch = "";
    if (!res.destroyed && !res.write(text)) full = true;
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    process.nextTick(flush);
  };
  schedule();
  let complete = false;
  try {
    for (;;) {
      if (res.destroyed) break;
      if (full) {
        full = false;
        if (res.writableNeedDrain) await waitForDrain(res);
        continue;
      }
      const { done, value } = await frames.next();
      if (done) break;
      if (typeof value === "string") {
        batch += value;
        if (batch.length >= MAX_BATCH) flush();
        else schedule();
      } else {
        // Bytes relayed as they came: after the text before them, in order.
        flush();
        if (!res.destroyed && !res.write(value)) full = true;
      }
    }
    complete = true;
  } finally {
    // Releases the upstream when the client left early; a no-op after a normal end.
    await frames.return?.();
    flush();
    if (!complete && !res.destroyed) res.end();
  }
  // A handled reply is ended by h3's Node adapter (srvx calls `end()` once the handler returns
  // kHandled). Ending it here as well would make that second `end()` build an
  // ERR_STREAM_ALREADY_FINISHED error, stack trace and all, on every stream. Should an adapter
  // not end it, it is ended a moment later.
  if (!res.destroyed) setImmediate(endResponse, res);
  return kHandled;
}

function endResponse(res: ServerResponse): void {
  if (!res.writableEnded && !res.destroyed) res.end();
}

function toWebResponse(headers: Record<string, string>, frames: AsyncIterator<SseFrame>): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await frames.next();
        if (done) controller.close();
        else controller.enqueue(typeof value === "string" ? encoder.encode(value) : value);
      } catch (error) {
        controller.error(error);
      }
    },
    async cancel() {
      await frames.return?.();
    },
  });
  return new Response(body, { status: 200, headers });
}

/**
 * Sends the frames as an SSE reply. Returns what the h3 handler should return.
 * The frames iterator must not throw: it turns failures into an error event itself.
 */
export function sendSse(event: H3Event, headers: Record<string, string>, frames: AsyncIterator<SseFrame>): Promise<symbol> | Response {
  const res = event.runtime?.node?.res;
  if (res) return writeToNode(res as ServerResponse, headers, frames);
  return toWebResponse(headers, frames);
}
