/**
 * Relaying an upstream stream that is already in the client's format (OpenAI
 * `chat.completion.chunk` events) in whole reads. A read of the body brings a dozen or more
 * events; they are cut at the last event boundary, and their text is passed on as one piece,
 * unchanged but for what the client is owed (README "Endpoints" and "Errors"): the usage chunk is
 * read (and dropped for a client that did not ask for it), `service_tier` is removed unless the
 * client set it, an error event becomes the stream's one error event, and `data: [DONE]` ends the
 * stream (the core sends its own).
 *
 * The stream must also be whole (`chunk-check.ts`): each event's data is parsed, and an event that
 * is not a chunk ends the stream like an error event; a stream that ends (with or without
 * `[DONE]`) before each choice has its finish reason ends with the error event, or is a 502 when
 * nothing was sent yet. Once every choice has its finish reason the answer is whole
 * (`stream-end.ts`): the usage chunk completes the stream at once, a body that breaks off ends it
 * normally, and a body that sends nothing more for a second ends it too.
 *
 * A block that is not plain `data: …` lines (CR line ends, `event:`/`id:` fields, comments,
 * multi-line data) is read by eventsource-parser instead, event by event, with the same rules.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { upstreamError } from "../errors.ts";
import { toBodyReadError } from "../upstream/client.ts";
import type { ChatEventStream } from "../plugin.ts";
import { sseBlocksOf, type SseBlocks } from "../sse/blocks.ts";
import { createEventParser, wholeLines } from "../sse/read.ts";
import { chatErrorFrame, DONE_FRAME } from "../sse/tail.ts";
import { MAX_UPSTREAM_DEPTH } from "../utils/json-nesting.ts";
import { sseDataLines } from "../sse/write.ts";
import { ChunkCheck, DROP, mayBeError, parseEventData, RELAY_WITHOUT_TIER, type ChunkCheckOptions } from "./chunk-check.ts";
import { removeServiceTier } from "./service-tier.ts";
import { GRACE_OVER, readWithin, STREAM_END_GRACE_MS } from "./stream-end.ts";

export interface EventRelayOptions extends ChunkCheckOptions {
  /** The provider's timeout, for the errors of a body that stalls. */
  timeoutMs: number;
  /** True once the client has gone: stop reading, send nothing more. */
  clientGone(): boolean;
  /** Maps a failure of the upstream (a body that broke off or stalled, an error event) for the client. */
  classify(error: unknown): unknown;
  /** Runs after the last chunk and before `[DONE]`; a failure becomes the stream's error event. */
  beforeDone?(): Promise<void>;
  /** Called with a mid-stream failure, for the log. */
  onError?(error: unknown): void;
}

/** The relayed text of one block, and whether the stream ended in it. */
interface BlockResult {
  text: string;
  done: boolean;
}

/** What a read that completes no event gives. */
const NOTHING: BlockResult = Object.freeze({ text: "", done: false });

class EventRelay {
  private readonly reader: AsyncIterator<Buffer>;
  /** The body's reads cut into whole events; holds an event not yet complete, to the limit. */
  private readonly blocks: SseBlocks;
  private parser: ReturnType<typeof createParser> | undefined;
  private parsed: EventSourceMessage[] = [];
  private events = 0;
  /** Checks each event, follows the choices' finish reasons, reports the usage. */
  private readonly chunks: ChunkCheck;
  /** Some event of the text being relayed has a `service_tier` to remove. */
  private stripTier = false;
  /** When the grace after the last finish reason ends (`stream-end.ts`); 0 until then. */
  private graceEnds = 0;
  /** `[DONE]` was read: the body's end is at most a read away. */
  private sawDone = false;
  /** The body has ended, or been let go of. */
  private bodyDone = false;
  /** An error event that came after chunks of the same read: thrown by the next `next()`, once those are sent. */
  private pendingError: unknown;

  constructor(
    private readonly stream: ChatEventStream,
    private readonly options: EventRelayOptions,
  ) {
    this.reader = stream.body[Symbol.asyncIterator]();
    this.blocks = sseBlocksOf(stream.body);
    // The first event, not the first chunk, ends the call's whole-wait timeout (`openEventRelay`).
    stream.body.keepDeadline?.();
    this.chunks = new ChunkCheck(options);
  }

  /** At the stream's end: throws unless every choice had its finish reason. */
  checkFinished(): void {
    this.chunks.end();
  }

  /**
   * The relayed text up to the next read that has some, and whether the stream ended; throws the
   * upstream's failure unmapped.
   */
  async next(): Promise<BlockResult> {
    if (this.pendingError !== undefined) {
      const error = this.pendingError;
      this.pendingError = undefined;
      throw error;
    }
    for (;;) {
      let read: IteratorResult<Buffer> | typeof GRACE_OVER;
      try {
        read = this.chunks.finished ? await this.readInGrace() : await this.reader.next();
      } catch (error) {
        this.bodyDone = true;
        // The answer is whole: a body that breaks off now has lost nothing but its `[DONE]`.
        if (this.chunks.finished) return { text: "", done: true };
        throw toBodyReadError(error, this.options.provider, this.options.timeoutMs);
      }
      if (read === GRACE_OVER) {
        // Nothing came for a while after the last finish reason: the answer is over, and the body not needed.
        this.release();
        return { text: "", done: true };
      }
      const { done, value } = read;
      if (done) {
        // An event cut off before its blank line at the end is dropped, as the SSE spec says.
        this.bodyDone = true;
        if (this.events === 0) throw upstreamError(`${this.options.provider}: the reply to a streamed request carried no events.`);
        return { text: "", done: true };
      }
      const result = this.parseFast(value);
      if (result.done || result.text !== "") return result;
    }
  }

  /** The next read, or `GRACE_OVER` once the grace after the last finish reason has passed. */
  private readInGrace(): Promise<IteratorResult<Buffer> | typeof GRACE_OVER> {
    if (this.graceEnds === 0) this.graceEnds = Date.now() + STREAM_END_GRACE_MS;
    return readWithin(this.reader.next(), this.graceEnds - Date.now());
  }

  private parseFast(chunk: Buffer): BlockResult {
    const block = this.blocks.push(chunk);
    if (block === undefined) return NOTHING;
    // Whole events only: a multi-byte character never straddles the cut, and the general parser
    // (CR line ends: see the file's comment) holds nothing from one block to the next.
    return this.relayBlock(wholeLines(block.toString("utf8")));
  }

  /**
   * Relays a block of whole events in one piece. From the first event that is not a plain
   * `data: …` line on, the block is read by the general parser.
   */
  private relayBlock(block: string): BlockResult {
    let text = "";
    let copiedTo = 0;
    let pos = 0;
    while (pos < block.length) {
      const lineEnd = block.indexOf("\n", pos);
      const start = pos + 6;
      // Plain events only: one `data: ` line each (not blank, not space-padded), then the blank line.
      if (block.charCodeAt(lineEnd + 1) !== 10 || !block.startsWith("data: ", pos) || lineEnd === start || block.charCodeAt(start) === 32) {
        return this.parseEvents(block.slice(pos), text + block.slice(copiedTo, pos));
      }
      if (lineEnd - start === 6 && block.startsWith("[DONE]", start)) {
        this.sawDone = true;
        return { text: this.tierless(text + block.slice(copiedTo, pos)), done: true };
      }
      // Nothing but `[DONE]` is relayed after the usage chunk that completed the stream.
      if (this.chunks.complete) return { text: this.tierless(text + block.slice(copiedTo, pos)), done: true };
      let use: number;
      try {
        use = this.take(undefined, block.slice(start, lineEnd));
      } catch (error) {
        return this.stop(error, text + block.slice(copiedTo, pos));
      }
      const next = lineEnd + 2;
      if (use === DROP) {
        text += block.slice(copiedTo, pos);
        copiedTo = next;
      }
      pos = next;
    }
    const whole = copiedTo === 0 ? block : text + block.slice(copiedTo);
    return { text: this.tierless(whole), done: this.chunks.complete };
  }

  /**
   * Checks one event (`chunk-check.ts`) and says what to do with its text; throws the error an
   * error event reports, and 502 for an event that is not a chunk.
   */
  private take(event: string | undefined, data: string): number {
    const value = parseEventData(data, this.options.collect ? MAX_UPSTREAM_DEPTH : undefined);
    if (event === "error" || mayBeError(value)) {
      const error = this.stream.errorOf(event, data);
      if (error !== undefined) throw error;
    }
    const use = this.chunks.take(value);
    this.events++;
    if (use === RELAY_WITHOUT_TIER) this.stripTier = true;
    return use;
  }

  /** Ends the stream with `error`: thrown now if `before` (the unrelayed text before it in this read) is empty, else on the next read. */
  private stop(error: unknown, before: string): BlockResult {
    const text = this.tierless(before);
    if (text === "") throw error;
    this.pendingError = error;
    return { text, done: false };
  }

  /** `text` without `service_tier` when one of its events has one. */
  private tierless(text: string): string {
    if (!this.stripTier) return text;
    this.stripTier = false;
    return removeServiceTier(text);
  }

  // The general parser ---------------------------------------------------------------------------

  /**
   * Feeds whole events to the parser and relays the
   * events it completes after `text`, the relayed text of this read so far.
   */
  private parseEvents(input: string, text = ""): BlockResult {
    this.parser ??= createEventParser(this.stream.body, (event) => this.parsed.push(event));
    this.parser.feed(input);
    const events = this.parsed;
    this.parsed = [];
    for (const { event, data } of events) {
      if (data === "[DONE]") {
        this.sawDone = true;
        return { text: this.tierless(text), done: true };
      }
      if (!data.trim()) continue;
      if (this.chunks.complete) return { text: this.tierless(text), done: true };
      let use: number;
      try {
        use = this.take(event, data);
      } catch (error) {
        return this.stop(error, text);
      }
      if (use !== DROP) text += sseDataLines(data);
    }
    return { text: this.tierless(text), done: this.chunks.complete };
  }

  /**
   * Lets go of a body that has not ended. After `[DONE]` the body has usually received its end
   * too (it comes in the same read): reading on lets it end by itself, while destroying it would
   * abort a request that is complete (and make a `Readable` build an error). One that has not
   * ended by the next turn of the event loop (by `STREAM_END_GRACE_MS` when the usage chunk
   * completed the stream before `[DONE]`), or any body the client left or that failed, is
   * destroyed, which aborts its request.
   */
  release(afterDone = false): void {
    if (this.bodyDone) return;
    this.bodyDone = true;
    const body = this.stream.body;
    if (body.destroyed) return;
    if (!afterDone) {
      body.destroy();
      return;
    }
    const waiting: Draining = { body, reader: this.reader, ended: false };
    readToEnd(waiting);
    if (this.sawDone) setImmediate(destroyUnlessEnded, waiting);
    else setTimeout(destroyUnlessEnded, STREAM_END_GRACE_MS, waiting).unref();
  }
}

/** A body read on after the stream is complete, until it ends or is destroyed. */
interface Draining {
  body: ChatEventStream["body"];
  reader: AsyncIterator<Buffer>;
  ended: boolean;
}

/** Reads and drops what is left (a `[DONE]`, the chunked body's end) until the body ends. */
function readToEnd(waiting: Draining): void {
  waiting.reader.next().then(
    (read) => {
      if (read.done === true) waiting.ended = true;
      else if (!waiting.body.destroyed) readToEnd(waiting);
    },
    () => (waiting.ended = true),
  );
}

function destroyUnlessEnded(waiting: Draining): void {
  if (!waiting.ended && !waiting.body.destroyed) waiting.body.destroy();
}

/**
 * Opens the relay: reads until the first chunks (or the end) before returning, so that a failure
 * before any event still becomes an error reply with its status; the frames that follow never
 * throw (a later failure is one SSE error event, and no `[DONE]`).
 */
export async function openEventRelay(stream: ChatEventStream, options: EventRelayOptions): Promise<AsyncGenerator<string, void, undefined>> {
  const relay = new EventRelay(stream, options);
  let first: BlockResult;
  try {
    first = await relay.next();
    // A stream that is over in its first read, and broken, is an error reply: nothing was sent yet.
    if (first.done) relay.checkFinished();
  } catch (error) {
    relay.release();
    throw error;
  }
  // The first event is here: from now on the call's timeout bounds each gap, not the whole reply.
  stream.body.markStreaming?.();
  return relayFrames(relay, first, options);
}

async function* relayFrames(relay: EventRelay, first: BlockResult, options: EventRelayOptions): AsyncGenerator<string, void, undefined> {
  try {
    let block = first;
    for (;;) {
      if (block.text !== "") yield block.text;
      if (block.done) break;
      if (options.clientGone()) return;
      block = await relay.next();
    }
    // A client that left is not answered, and its reply not stored, however the body ended.
    if (options.clientGone()) return;
    relay.checkFinished();
    relay.release(true);
    await options.beforeDone?.();
    yield DONE_FRAME;
  } catch (error) {
    if (options.clientGone()) return;
    const mapped = options.classify(error);
    options.onError?.(mapped);
    yield chatErrorFrame(mapped);
  } finally {
    relay.release();
  }
}
