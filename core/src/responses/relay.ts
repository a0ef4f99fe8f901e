/**
 * Relaying a forwarded reply (the responses API, contract §4) to the client byte for byte: a JSON
 * body as received; an SSE body chunk by chunk as it arrives, never parsed or re-serialised.
 *
 * Two things are still seen on the way, at almost no cost:
 * - Event boundaries, by a native `lastIndexOf` per chunk: only whole events are passed on, so when
 *   the upstream breaks off mid-event the client never gets half an event glued to our error event.
 * - The final usage, for rate limits and logs: the stream's last event (`response.completed`,
 *   `.incomplete` or `.failed`, before any `[DONE]`) is kept as a slice and parsed once at the end.
 */
import { ModelmuxError, upstreamError } from "../errors.ts";
import type { HttpBody } from "../http-client.ts";
import type { Usage } from "../types/chat.ts";
import type { SseFrame } from "../utils/sse-write.ts";
import { usageOfEventData } from "./usage.ts";

/** One event may not grow past this; an upstream that streams more without a break is broken. */
const MAX_EVENT_BYTES = 8 * 1024 * 1024;

const LF2 = Buffer.from("\n\n");
const CRLF2 = Buffer.from("\r\n\r\n");
const DONE = Buffer.from("data: [DONE]");

/** The index just past the last event boundary in `chunk`, or 0 when there is none. */
function endOfLastEvent(chunk: Buffer, from = chunk.length): number {
  // A negative offset would count from the end of the buffer.
  if (from < 0) return 0;
  const lf = chunk.lastIndexOf(LF2, from);
  const crlf = chunk.lastIndexOf(CRLF2, from);
  return Math.max(lf < 0 ? 0 : lf + 2, crlf < 0 ? 0 : crlf + 4);
}

/** Where the event that ends at `end` (just past its blank line) starts in `block`. */
function eventStart(block: Buffer, end: number): number {
  const closing = block[end - 2] === 0x0d ? CRLF2.length : LF2.length;
  return endOfLastEvent(block, end - closing - 1);
}

/** The last event of a block of whole events that is not `[DONE]`, if the block has one. */
function lastEvent(block: Buffer): Buffer | undefined {
  let end = block.length;
  while (end > 0) {
    const start = eventStart(block, end);
    const event = block.subarray(start, end);
    if (!event.subarray(0, DONE.length).equals(DONE)) return event;
    end = start;
  }
  return undefined;
}

/** The usage carried by one SSE event's bytes, when it is a terminal responses event. */
export function usageOfEvent(event: Buffer | undefined): Usage | undefined {
  if (!event) return undefined;
  const text = event.toString("utf8");
  // One `data:` line (what OpenAI sends) is read as it is; several are joined, as SSE says.
  const lines = text.split(/\r?\n/).filter((line) => line.startsWith("data:"));
  const data = lines.length === 1 ? lines[0]!.slice(lines[0]![5] === " " ? 6 : 5) : lines.map((line) => line.slice(line[5] === " " ? 6 : 5)).join("\n");
  return usageOfEventData(data);
}

export interface RelayOptions {
  /** Maps a failure while reading the upstream body (504 on a stall, 502 on a break). */
  classify(error: unknown): unknown;
  /** True once the client has gone: stop reading, send nothing more. */
  clientGone(): boolean;
  /** Called once when the stream ends well, with the usage of its terminal event when there was one. */
  onEnd(usage: Usage | undefined): void;
  /** Called once when the upstream failed mid-stream; an error event has been sent. */
  onError(error: unknown): void;
}

/** The error event sent when the upstream fails mid-stream: readable as a responses `error` event and by the SDK's `data.error` check. */
export function errorEvent(error: ModelmuxError): string {
  const { error: envelope } = error.toEnvelope();
  const data = { type: "error", code: envelope.code, message: envelope.message, param: envelope.param, error: envelope };
  return `event: error\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * The frames to send for an upstream SSE body: its bytes in whole events, then, if it fails, one
 * error event. Never throws; ending it early (`return()`) destroys the upstream body.
 */
export async function* relaySse(body: HttpBody, options: RelayOptions): AsyncGenerator<SseFrame> {
  let held: Buffer | undefined; // bytes of an event not yet complete
  let last: Buffer | undefined; // the last whole event that was not [DONE]
  try {
    for await (const raw of body as AsyncIterable<Buffer>) {
      if (options.clientGone()) return;
      const chunk = held ? Buffer.concat([held, raw]) : raw;
      const end = endOfLastEvent(chunk);
      held = end < chunk.length ? chunk.subarray(end) : undefined;
      if (held && held.length > MAX_EVENT_BYTES) throw upstreamError("the upstream sent an event larger than 8 MiB");
      if (end === 0) continue;
      const whole = end === chunk.length ? chunk : chunk.subarray(0, end);
      const event = lastEvent(whole);
      if (event) last = event;
      yield whole;
    }
    // An event cut off before its blank line at the very end: the upstream closed cleanly, pass it on.
    if (held) yield held;
    options.onEnd(usageOfEvent(last));
  } catch (error) {
    if (options.clientGone()) return;
    const mapped = options.classify(error);
    options.onError(mapped);
    yield errorEvent(mapped instanceof ModelmuxError ? mapped : upstreamError("the upstream stream failed", error));
  } finally {
    if (!body.destroyed) body.destroy();
  }
}
