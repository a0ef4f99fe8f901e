/**
 * Cutting an upstream's SSE bytes into blocks of whole events: the one way every reader of an
 * upstream stream holds an event that is not complete yet (the chat relay, the responses relay,
 * `readSseEvents`). Each read's bytes up to its last event boundary (a blank line, with any of
 * SSE's line ends: LF, CRLF, CR) are handed on as one block; the bytes after it are held until a
 * later read completes their event, and never past `server.upstream_body_limit`, counted in bytes.
 *
 * The work per read is bounded by the read, not by what is held: the boundary is searched for in
 * the new bytes only (and the two before them, for a blank line split across reads), and the held
 * bytes live in one buffer that grows by doubling. An event that never ends costs each of its
 * bytes a few copies, not a copy of everything held so far per read.
 */
import type { HttpBody } from "../upstream/client.ts";
import { bufferLimitOf, UpstreamBodyTooLarge } from "../upstream/body-limit.ts";
import { DONE_DATA } from "./tail.ts";

const LF = 10;
const CR = 13;
const COLON = 58;
const LF2 = Buffer.from("\n\n");
const DATA = Buffer.from("data");
const DONE = Buffer.from(`data: ${DONE_DATA}`);

/** `bytes[i]`, reading back into `held[0, heldBytes)` for a negative `i`; -1 before both. */
function byteAt(bytes: Buffer, i: number, held: Buffer | undefined, heldBytes: number): number {
  if (i >= 0) return bytes[i]!;
  const j = heldBytes + i;
  return held !== undefined && j >= 0 ? held[j]! : -1;
}

/** Whether the bytes before `end` end with a blank line: a line end right after another one. */
function blankLineEndsAt(bytes: Buffer, end: number, held?: Buffer, heldBytes = 0): boolean {
  const last = byteAt(bytes, end - 1, held, heldBytes);
  if (last !== LF && last !== CR) return false;
  let before = byteAt(bytes, end - 2, held, heldBytes);
  // A CR before an LF is one line end (CRLF): the one before it must be a line end too.
  if (last === LF && before === CR) before = byteAt(bytes, end - 3, held, heldBytes);
  return before === LF || before === CR;
}

/**
 * Just past the last blank line that ends at or before `to` in `bytes` (seen on its own), or 0.
 * Every LF and CR is looked at once, from the end, by native searches.
 */
export function lastEventEnd(bytes: Buffer, to = bytes.length): number {
  if (to <= 0) return 0;
  // A negative offset would count from the end of the buffer: each search stops at 0.
  let lf = bytes.lastIndexOf(LF, to - 1);
  let cr = bytes.lastIndexOf(CR, to - 1);
  while (lf >= 0 || cr >= 0) {
    const at = Math.max(lf, cr);
    if (blankLineEndsAt(bytes, at + 1)) return at + 1;
    if (at === lf) lf = at > 0 ? bytes.lastIndexOf(LF, at - 1) : -1;
    else cr = at > 0 ? bytes.lastIndexOf(CR, at - 1) : -1;
  }
  return 0;
}

/**
 * The blocks of whole events of one stream, fed one read at a time (`push`, synchronous).
 * @example
 * const blocks = sseBlocksOf(body);
 * for await (const chunk of body) {
 *   const block = blocks.push(chunk); // whole events, or undefined while an event is incomplete
 *   if (block !== undefined) send(block);
 * }
 * const rest = blocks.end(); // at the body's end: a trailing LF to pass on, or nothing
 */
export class SseBlocks {
  /** The held bytes are `held[0, heldBytes)`; `held` may be a view of a read (`owned` false). */
  private held: Buffer | undefined;
  private heldBytes = 0;
  private owned = false;

  /** `limit`: the most held of one event, in bytes (`server.upstream_body_limit`). */
  constructor(readonly limit: number) {}

  /** How many bytes of an incomplete event are held. */
  get heldLength(): number {
    return this.heldBytes;
  }

  /**
   * Adds one read; returns the events it completes, with the held bytes before them, as one
   * buffer, or undefined when it completes none. Throws an `UpstreamBodyTooLarge` when the event
   * still incomplete outgrows the limit.
   */
  push(chunk: Buffer): Buffer | undefined {
    const size = chunk.length;
    // Most reads end where an event does: then no search at all.
    if (this.heldBytes === 0 && size > 1 && chunk[size - 1] === LF && chunk[size - 2] === LF) return chunk;
    let end: number;
    if (blankLineEndsAt(chunk, size, this.held, this.heldBytes)) end = size;
    else if (chunk.indexOf(CR) < 0) {
      const at = chunk.lastIndexOf(LF2);
      end = at < 0 ? 0 : at + 2;
    } else end = lastEventEnd(chunk);
    // A blank line may have begun in the held bytes: it then ends in the first two of this read.
    if (end === 0 && this.heldBytes > 0) end = this.seamEnd(chunk);
    if (end === 0) {
      this.hold(chunk);
      return undefined;
    }
    const block = this.heldBytes === 0 ? (end === chunk.length ? chunk : chunk.subarray(0, end)) : this.joinHeld(chunk, end);
    if (end < chunk.length) this.hold(chunk.subarray(end));
    return block;
  }

  /**
   * The body ended: what is held, when it is only line ends (the LF of a CRLF whose CR ended the
   * last block: a block is cut at a CR without waiting to see whether an LF follows), for a reader
   * that passes bytes on as they came; otherwise undefined: an event cut off before its blank line
   * is dropped, as the SSE spec says.
   */
  end(): Buffer | undefined {
    const held = this.heldBytes > 0 ? this.held!.subarray(0, this.heldBytes) : undefined;
    this.held = undefined;
    this.heldBytes = 0;
    this.owned = false;
    if (held === undefined) return undefined;
    for (const byte of held) if (byte !== LF && byte !== CR) return undefined;
    return held;
  }

  private seamEnd(chunk: Buffer): number {
    for (let end = Math.min(2, chunk.length); end > 0; end--) if (blankLineEndsAt(chunk, end, this.held, this.heldBytes)) return end;
    return 0;
  }

  /** The held bytes and `chunk[0, end)` as one buffer; nothing is held after. */
  private joinHeld(chunk: Buffer, end: number): Buffer {
    const held = this.held!;
    const size = this.heldBytes + end;
    let block: Buffer;
    if (this.owned && size <= held.length) {
      chunk.copy(held, this.heldBytes, 0, end);
      block = held.subarray(0, size);
    } else {
      block = Buffer.concat([held.subarray(0, this.heldBytes), chunk.subarray(0, end)], size);
    }
    this.held = undefined;
    this.heldBytes = 0;
    this.owned = false;
    return block;
  }

  private hold(piece: Buffer): void {
    if (piece.length === 0) return;
    const size = this.heldBytes + piece.length;
    if (size > this.limit) throw new UpstreamBodyTooLarge(this.limit, "event");
    if (this.heldBytes === 0) {
      this.held = piece;
      this.heldBytes = size;
      this.owned = false;
      return;
    }
    let held = this.held!;
    if (!this.owned || size > held.length) {
      const grown = Buffer.allocUnsafe(Math.min(this.limit, Math.max(size, this.heldBytes * 2)));
      held.copy(grown, 0, 0, this.heldBytes);
      this.held = held = grown;
      this.owned = true;
    }
    piece.copy(held, this.heldBytes);
    this.heldBytes = size;
  }
}

/**
 * The blocks of `body`'s events, each event held to the body's limit (`bufferLimitOf`,
 * `server.upstream_body_limit`): the one way the core cuts an upstream's SSE bytes.
 */
export function sseBlocksOf(body: HttpBody): SseBlocks {
  return new SseBlocks(bufferLimitOf(body));
}

/**
 * Whether whole events' bytes carry an event: a `data` field. A block of comments (`: keep-alive`)
 * or of fields without data dispatches nothing, as the SSE spec says, so it is not a first event.
 */
export function hasData(bytes: Buffer): boolean {
  for (let at = bytes.indexOf(DATA); at >= 0; at = bytes.indexOf(DATA, at + DATA.length)) {
    const before = at === 0 ? LF : bytes[at - 1];
    const after = bytes[at + DATA.length];
    if ((before === LF || before === CR) && (after === COLON || after === LF || after === CR)) return true;
  }
  return false;
}

/** The last event of a block of whole events that carries data other than `[DONE]`, if it has one. */
export function lastDataEvent(block: Buffer): Buffer | undefined {
  let end = block.length;
  while (end > 0) {
    // The event's own blank line (one line end) is not a boundary before it.
    const closing = block[end - 1] === LF && block[end - 2] === CR ? 2 : 1;
    const start = lastEventEnd(block, end - closing - 1);
    const event = block.subarray(start, end);
    if (hasData(event) && event.compare(DONE, 0, DONE.length, 0, Math.min(DONE.length, event.length)) !== 0) return event;
    end = start;
  }
  return undefined;
}
