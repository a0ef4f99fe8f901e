/**
 * Relaying an upstream stream that is already in the client's format (OpenAI
 * `chat.completion.chunk` events) without handling each chunk in JavaScript. A read of the body
 * brings a dozen or more events; they are cut at the last event boundary, checked with a few native
 * string searches over the whole block, and passed on as one piece. Only what the contract asks is
 * changed (contract §8, service-interface.md): the usage chunk is read (and dropped for a client
 * that did not ask for it), `service_tier` is removed unless the client set it, an error event
 * becomes the stream's one error event, and `data: [DONE]` ends the stream (the core sends its own).
 *
 * The stream must also be whole (`chunk-check.ts`): each event's text is checked to be a chunk
 * without parsing it, and its finish reason and empty choices (the usage chunk) are read from it.
 * An unreadable event ends the stream like an error event; a stream that ends (with or without
 * `[DONE]`) before each choice has its finish reason ends with the error event, or is a 502 when
 * nothing was sent yet. The usage chunk that follows the last finish reason completes the stream
 * at once, so an upstream that keeps its connection open without `[DONE]` does not hold the client.
 *
 * A block that is not plain `data: …` lines (CR line ends, `event:`/`id:` fields, comments,
 * multi-line data) is read by eventsource-parser instead, event by event, with the same rules.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { toModelmuxError, upstreamError } from "../errors.ts";
import { toBodyReadError } from "../http-client.ts";
import type { ChatEventStream } from "../plugin.ts";
import { SseBlocks } from "../sse-blocks.ts";
import { eventSizeGuard, wholeLines } from "../sse-parse.ts";
import type { ChatStreamItem, Usage } from "../types/chat.ts";
import { bufferLimitOf } from "../upstream-body-limit.ts";
import { sseData } from "../utils/sse-write.ts";
import { ChunkScanner, unfinishedStream, unreadableEvent } from "./chunk-check.ts";
import { removeServiceTier } from "./service-tier.ts";
import { readUsageChunk } from "./usage-chunk.ts";

export interface EventRelayOptions {
  /** The provider's name and timeout, for the errors of a body that stalls, breaks off or carries no events. */
  provider: string;
  timeoutMs: number;
  /** The client asked for `stream_options.include_usage`. */
  includeUsage: boolean;
  /** The client set `service_tier`; otherwise it is removed from chunks. */
  keepServiceTier: boolean;
  /** The request's `n`: how many finish reasons make the answer complete. Default 1. */
  choices?: number;
  /** True once the client has gone: stop reading, send nothing more. */
  clientGone(): boolean;
  /** Called with the usage of the reply, when the upstream reported it. */
  onUsage?(usage: Usage): void;
  /** Maps a failure of the upstream (a body that broke off or stalled, an error event) for the client. */
  classify(error: unknown): unknown;
  /** Sees every chunk's JSON, the usage chunk included (`store: true` assembles them); slower: each chunk is cut out. */
  collect?(item: ChatStreamItem): void;
  /** Runs after the last chunk and before `[DONE]`; a failure becomes the stream's error event. */
  beforeDone?(): Promise<void>;
  /** Called with a mid-stream failure, for the log. */
  onError?(error: unknown): void;
}

const DONE_FRAME = "data: [DONE]\n\n";
/** What a read that completes no event gives. */
const NOTHING: BlockResult = Object.freeze({ text: "", done: false });

/** An error payload always has the token `"error"`; in a chunk's text its quotes would be escaped. `rror"` is searched first: its first letter is rarer. */
const MAY_BE_ERROR_TAIL = 'rror"';
/**
 * How long a body is still read after the usage chunk completed the stream without `[DONE]`: the
 * `[DONE]` and the body's end usually follow within milliseconds, and a body that ends by itself
 * keeps its keep-alive connection. The client has its `[DONE]` already; only the connection waits.
 */
const DRAIN_AFTER_USAGE_MS = 1000;

/** The relayed text of one block, and whether the stream ended in it. */
interface BlockResult {
  text: string;
  done: boolean;
}

class EventRelay {
  private readonly reader: AsyncIterator<Buffer>;
  /** The body's reads cut into whole events; holds an event not yet complete, to the limit. */
  private readonly blocks: SseBlocks;
  private parser: ReturnType<typeof createParser> | undefined;
  private parsed: EventSourceMessage[] = [];
  private events = 0;
  /** Reads each event's text: a chunk or not, its finish reasons, empty choices. */
  private readonly scanner: ChunkScanner;
  /** The usage chunk came after the last finish reason: the stream is complete without `[DONE]`. */
  private complete = false;
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
    this.blocks = new SseBlocks(bufferLimitOf(stream.body));
    // The first event, not the first chunk, ends the call's whole-wait timeout (`openEventRelay`).
    stream.body.keepDeadline?.();
    this.scanner = new ChunkScanner(options.choices);
  }

  /** At the stream's end: throws unless every choice had its finish reason. */
  checkFinished(): void {
    const { scanner } = this;
    if (!scanner.finished) throw unfinishedStream(this.options.provider, scanner.finishes, scanner.choices);
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
      let read: IteratorResult<Buffer>;
      try {
        read = await this.reader.next();
      } catch (error) {
        this.bodyDone = true;
        throw toBodyReadError(error, this.options.provider, this.options.timeoutMs);
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
    const { options, scanner } = this;
    const mayError = block.includes(MAY_BE_ERROR_TAIL);
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
      const next = lineEnd + 2;
      let drop = false;
      if (lineEnd - start === 6 && block.startsWith("[DONE]", start)) {
        this.sawDone = true;
        return { text: this.serviceTier(text + block.slice(copiedTo, pos)), done: true };
      }
      // Nothing but `[DONE]` is relayed after the usage chunk that completed the stream.
      if (this.complete) return { text: this.serviceTier(text + block.slice(copiedTo, pos)), done: true };
      if (mayError) {
        const at = block.indexOf(MAY_BE_ERROR_TAIL, start);
        const stop = at >= 0 && at < lineEnd ? this.checkError(undefined, block.slice(start, lineEnd), text + block.slice(copiedTo, pos)) : undefined;
        if (stop) return stop;
      }
      if (!scanner.scan(block, start, lineEnd)) return this.stop(unreadableEvent(options.provider), text + block.slice(copiedTo, pos));
      this.events++;
      if (scanner.emptyChoices) {
        const usage = readUsageChunk(block.slice(start, lineEnd), options);
        drop = usage === "drop";
        if (usage !== "none" && scanner.finished) this.complete = true;
      }
      if (options.collect) options.collect(block.slice(start, lineEnd));
      if (drop) {
        text += block.slice(copiedTo, pos);
        copiedTo = next;
      }
      pos = next;
    }
    const whole = copiedTo === 0 ? block : text + block.slice(copiedTo);
    return { text: this.serviceTier(whole), done: this.complete };
  }

  /**
   * When an event reports an error: throws it if nothing comes before it in this read, else returns
   * the text before it and throws the error on the next read. `before` is that text, unrelayed.
   */
  private checkError(event: string | undefined, data: string, before: string): BlockResult | undefined {
    const error = this.stream.errorOf(event, data);
    return error === undefined ? undefined : this.stop(error, before);
  }

  /** Ends the stream with `error`: thrown now if `before` (the unrelayed text before it in this read) is empty, else on the next read. */
  private stop(error: unknown, before: string): BlockResult {
    const text = this.serviceTier(before);
    if (text === "") throw error;
    this.pendingError = error;
    return { text, done: false };
  }

  private serviceTier(text: string): string {
    return this.options.keepServiceTier ? text : removeServiceTier(text);
  }

  // The general parser ---------------------------------------------------------------------------

  /**
   * Feeds text to the parser (whole events, or the body as it comes once decoded) and relays the
   * events it completes after `text`, the relayed text of this read so far.
   */
  private parseEvents(input: string, text = ""): BlockResult {
    const limit = bufferLimitOf(this.stream.body);
    this.parser ??= createParser({ maxBufferSize: limit, onEvent: (event) => this.parsed.push(event), onError: eventSizeGuard(limit) });
    this.parser.feed(input);
    const events = this.parsed;
    this.parsed = [];
    for (const { event, data } of events) {
      if (data === "[DONE]") {
        this.sawDone = true;
        return { text: this.serviceTier(text), done: true };
      }
      if (!data.trim()) continue;
      if (this.complete) return { text: this.serviceTier(text), done: true };
      if (event === "error" || data.includes(MAY_BE_ERROR_TAIL)) {
        const stop = this.checkError(event, data, text);
        if (stop) return stop;
      }
      const { scanner } = this;
      if (!scanner.scan(data)) return this.stop(unreadableEvent(this.options.provider), text);
      this.events++;
      const usage = scanner.emptyChoices ? readUsageChunk(data, this.options) : "none";
      if (usage !== "none" && scanner.finished) this.complete = true;
      this.options.collect?.(data);
      if (usage !== "drop") text += sseData(data);
    }
    return { text: this.serviceTier(text), done: this.complete };
  }

  /**
   * Lets go of a body that has not ended. After `[DONE]` the body has usually received its end
   * too (it comes in the same read): reading on lets it end by itself, while destroying it would
   * abort a request that is complete (and make a `Readable` build an error). One that has not
   * ended by the next turn of the event loop (by `DRAIN_AFTER_USAGE_MS` when the usage chunk
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
    else setTimeout(destroyUnlessEnded, DRAIN_AFTER_USAGE_MS, waiting).unref();
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
    relay.checkFinished();
    relay.release(true);
    await options.beforeDone?.();
    yield DONE_FRAME;
  } catch (error) {
    if (options.clientGone()) return;
    const mapped = options.classify(error);
    options.onError?.(mapped);
    yield sseData(JSON.stringify(toModelmuxError(mapped).toEnvelope()));
  } finally {
    relay.release();
  }
}
