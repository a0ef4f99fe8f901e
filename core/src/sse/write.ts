/**
 * Server-Sent Events as the client gets them: the reply headers and the `data:` frame. The reply writers
 * write the frames (`server/node-sse-reply.ts` straight to the socket, batched per tick, with
 * backpressure; `server/web-reply.ts` as a pulled `ReadableStream`).
 */

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
