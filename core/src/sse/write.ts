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

/** Frames one `data:` event. `data` must be one line (JSON we serialise is). */
export function sseData(data: string): string {
  return `data: ${data}\n\n`;
}

/**
 * Frames one `data:` event whose data may span lines (an upstream's event, as the SSE parser joined
 * its `data:` lines): each line gets its own `data:` field, so the client's parser joins them again.
 */
export function sseDataLines(data: string): string {
  return data.includes("\n") ? `data: ${data.replaceAll("\n", "\ndata: ")}\n\n` : `data: ${data}\n\n`;
}
