/**
 * Relaying a forwarded reply (the responses API, contract §4) to the client byte for byte: a JSON
 * body as received (`readReplyBytes`); an SSE body chunk by chunk as it arrives, never parsed or
 * re-serialised (`openSseRelay`).
 *
 * Three things are still seen on the way, at almost no cost:
 * - Event boundaries, by a native `lastIndexOf` per chunk: only whole events are passed on, so when
 *   the upstream breaks off mid-event the client never gets half an event glued to our error event.
 * - The final usage, for rate limits and logs: the stream's last event (`response.completed`,
 *   `.incomplete` or `.failed`, before any `[DONE]`) is kept as a slice and parsed once at the end.
 * - Sizes: a JSON body, or one event, may not outgrow `server.upstream_body_limit` (the body's
 *   `bufferLimit`); the stream as a whole is not limited.
 */
import { ModelmuxError, upstreamError } from "../errors.ts";
import { bufferLimitOf, UpstreamBodyTooLarge } from "../http-body.ts";
import type { HttpBody } from "../http-client.ts";
import type { Usage } from "../types/chat.ts";
import type { SseFrame } from "../utils/sse-write.ts";
import { usageOfEventData } from "./usage.ts";

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
 * Reads a forwarded JSON reply's bytes as they came. One past the body's `bufferLimit` stops the
 * read, destroys the body (which cancels its request) and throws an `UpstreamBodyTooLarge`.
 */
export async function readReplyBytes(body: HttpBody): Promise<Buffer> {
  const limit = bufferLimitOf(body);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    // Leaving the loop by a throw destroys the body.
    if (size > limit) throw new UpstreamBodyTooLarge(limit, "reply");
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
}

/**
 * An upstream SSE body cut into blocks of whole events. The bytes of an event not complete yet are
 * held in one buffer that grows by doubling, never past the limit: an event sent a few bytes a
 * read costs a copy of each byte about twice, not a copy of all it has so far per read.
 */
class SseBlocks {
  private readonly reader: AsyncIterator<Buffer>;
  private readonly limit: number;
  /** The held bytes are `held[0, heldBytes)`; `held` may be a view of a chunk (`owned` false). */
  private held: Buffer | undefined;
  private heldBytes = 0;
  private owned = false;
  /** The last whole event that was not [DONE]. */
  last: Buffer | undefined;

  constructor(body: HttpBody) {
    this.reader = (body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    this.limit = bufferLimitOf(body);
  }

  /**
   * The next block of whole events; at the body's end an event cut off before its blank line (the
   * upstream closed cleanly: it is passed on), then undefined. Throws the body's failure, and an
   * `UpstreamBodyTooLarge` for an event past the limit.
   */
  async next(): Promise<Buffer | undefined> {
    for (;;) {
      const step = await this.reader.next();
      if (step.done === true) {
        const rest = this.heldBytes > 0 ? this.held!.subarray(0, this.heldBytes) : undefined;
        this.held = undefined;
        this.heldBytes = 0;
        return rest;
      }
      const block = this.add(step.value);
      if (block !== undefined) return block;
    }
  }

  /** Adds a chunk; returns the events it completes, if any. */
  private add(raw: Buffer): Buffer | undefined {
    let end = endOfLastEvent(raw);
    // An event is held: its blank line may straddle the two pieces.
    if (end === 0 && this.heldBytes > 0) end = this.seamEnd(raw);
    if (end === 0) {
      this.hold(raw);
      return undefined;
    }
    const head = end === raw.length ? raw : raw.subarray(0, end);
    const whole = this.heldBytes === 0 ? head : Buffer.concat([this.held!.subarray(0, this.heldBytes), head]);
    this.held = undefined;
    this.heldBytes = 0;
    this.owned = false;
    if (end < raw.length) this.hold(raw.subarray(end));
    const event = lastEvent(whole);
    if (event) this.last = event;
    return whole;
  }

  /** Where in `raw` a blank line that began in the held bytes ends, or 0. */
  private seamEnd(raw: Buffer): number {
    const from = Math.max(0, this.heldBytes - 3);
    const tail = this.held!.subarray(from, this.heldBytes);
    const end = endOfLastEvent(Buffer.concat([tail, raw.subarray(0, 3)]));
    return end > tail.length ? end - tail.length : 0;
  }

  private hold(piece: Buffer): void {
    const size = this.heldBytes + piece.length;
    if (size > this.limit) throw new UpstreamBodyTooLarge(this.limit, "event");
    if (this.heldBytes === 0) {
      this.held = piece;
      this.heldBytes = size;
      this.owned = false;
      return;
    }
    if (!this.owned || size > this.held!.length) {
      const grown = Buffer.allocUnsafe(Math.min(this.limit, Math.max(size, this.heldBytes * 2)));
      this.held!.copy(grown, 0, 0, this.heldBytes);
      this.held = grown;
      this.owned = true;
    }
    piece.copy(this.held!, this.heldBytes);
    this.heldBytes = size;
  }
}

/**
 * Opens the relay of an upstream SSE body: reads until its first whole event (or its end) before
 * returning, so that a failure before any event (a stall past the call's timeout, an event past
 * the limit, a break) is thrown, classified, and becomes an error reply with its status. The frames
 * that follow are the body's bytes in whole events and, if it fails later, one error event; they
 * never throw, and ending them early (`return()`) destroys the upstream body.
 */
export async function openSseRelay(body: HttpBody, options: RelayOptions): Promise<AsyncGenerator<SseFrame>> {
  const blocks = new SseBlocks(body);
  let first: Buffer | undefined;
  try {
    first = await blocks.next();
  } catch (error) {
    if (!body.destroyed) body.destroy();
    throw options.classify(error);
  }
  // The first event is here: from now on the call's timeout bounds each gap, not the whole reply.
  body.markStreaming?.();
  return relayFrames(body, blocks, first, options);
}

async function* relayFrames(body: HttpBody, blocks: SseBlocks, first: Buffer | undefined, options: RelayOptions): AsyncGenerator<SseFrame> {
  try {
    for (let block = first; block !== undefined; block = await blocks.next()) {
      if (options.clientGone()) return;
      yield block;
    }
    options.onEnd(usageOfEvent(blocks.last));
  } catch (error) {
    if (options.clientGone()) return;
    const mapped = options.classify(error);
    options.onError(mapped);
    yield errorEvent(mapped instanceof ModelmuxError ? mapped : upstreamError("the upstream stream failed", error));
  } finally {
    if (!body.destroyed) body.destroy();
  }
}
