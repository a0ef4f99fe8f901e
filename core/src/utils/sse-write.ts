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

function uncorkResponse(res: ServerResponse): void {
  res.uncork();
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

async function writeToNode(res: ServerResponse, headers: Record<string, string>, frames: AsyncIterator<SseFrame>): Promise<symbol> {
  // Send the headers at the end of this tick, whether or not a frame is ready by then: a client
  // waiting for its first token sees the stream has begun. Corked until then, they leave in one
  // packet with the frames made in the same tick (node:http batches a tick's writes the same way),
  // instead of a system call and a packet of their own.
  res.cork();
  res.writeHead(200, headers);
  res.flushHeaders();
  process.nextTick(uncorkResponse, res);
  let complete = false;
  try {
    for (;;) {
      if (res.destroyed) break;
      const { done, value } = await frames.next();
      if (done) break;
      if (!res.write(value)) await waitForDrain(res);
    }
    complete = true;
  } finally {
    // Releases the upstream when the client left early; a no-op after a normal end.
    await frames.return?.();
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
