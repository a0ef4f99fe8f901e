/**
 * Turns a provider's stream items into the SSE frames the client gets (README "Errors"): one
 * `data:` event per chunk, `data: [DONE]` at the end, one error event (and no `[DONE]`) when the
 * provider fails mid-stream. Chunks that arrive as JSON strings are passed on as that text: they
 * are parsed for the checks, never serialised again. A chunk object that carries its JSON text
 * (`withRawJson`, `raw-json.ts`) is checked as an object and passed on as its text: neither parsed
 * nor serialised. Any other chunk object is serialised.
 *
 * Every item must be a chunk, and the stream whole (`chunk-check.ts`): an item that is not a chunk
 * is the upstream's failure (the chunks before it in a batch are sent first), and a stream that
 * ends before each choice has its finish reason ends with the error event (or is a 502 when
 * nothing was sent yet). Once every choice has its finish reason the answer is whole
 * (`stream-end.ts`): the usage chunk completes the stream (the provider's iterator is not read any
 * further), a connection that breaks off ends it normally, and one that sends nothing more for a
 * second ends it too; the provider's upstream request is then cancelled (`FramedCall.cancel`), as
 * its read would otherwise wait for the provider's `timeout`.
 */
import { isConnectionFailure } from "../upstream/client.ts";
import type { ChatStreamItem } from "../types/chat.ts";
import { chatErrorFrame, DONE_FRAME } from "../sse/tail.ts";
import { sseData, sseDataLines } from "../sse/write.ts";
import { ChunkCheck, DROP, parseEventData, RELAY_WITHOUT_TIER, type ChunkCheckOptions } from "./chunk-check.ts";
import { MAX_UPSTREAM_DEPTH } from "../utils/json-nesting.ts";
import { rawJsonOf } from "./raw-json.ts";
import { removeServiceTier } from "./service-tier.ts";
import { GRACE_OVER, readWithin, STREAM_END_GRACE_MS } from "./stream-end.ts";

/** The core's controls of the provider call whose stream is framed (`provider-call.ts`). */
export interface FramedCall {
  /** The first chunk to send is here: the whole-wait deadline of the call's upstream reply is over. */
  streaming(): void;
  /** Cancels the call's upstream requests; the client is not told, and is not gone. */
  cancel(): void;
}

export interface StreamFrameOptions extends ChunkCheckOptions {
  /** The provider call: told of the first chunk to send, and cancelled when its stream is left with a read pending. */
  call?: FramedCall;
  /** True once the client has gone: a failure is then no one's to hear about. */
  clientGone: () => boolean;
  /** Maps a provider's failure to the error the client is told about. */
  classify?: (error: unknown) => unknown;
  /** Runs after the last item and before `[DONE]`; a failure becomes the stream's error event. */
  beforeDone?: () => Promise<void>;
  /** Called with a mid-stream failure, for the log. */
  onError?: (error: unknown) => void;
}

type Item = ChatStreamItem | readonly ChatStreamItem[];
type Items = AsyncIterator<Item>;

/** One stream's framing: its options, and what the integrity rules follow. */
class Framer {
  /** Checks each item, follows the choices' finish reasons, reports the usage. */
  readonly chunks: ChunkCheck;
  /** What ended the stream in the middle of a batch: thrown once the frames before it are sent. */
  failure: unknown;
  /** A read of the provider's items was left pending when the grace ran out. */
  readPending = false;
  /** When the grace after the last finish reason ends (`stream-end.ts`); 0 until then. */
  private graceEnds = 0;

  constructor(readonly options: StreamFrameOptions) {
    this.chunks = new ChunkCheck(options);
  }

  /**
   * The frames of an item or a batch (one upstream read), joined: they are written together anyway.
   * Throws for an item that is not a chunk; one that follows other items of its batch is kept in
   * `failure` instead, and their frames are returned.
   */
  frame(value: Item): string {
    if (!Array.isArray(value)) return this.frameOfItem(value as ChatStreamItem);
    const items = value as readonly ChatStreamItem[];
    let text = "";
    for (let i = 0; i < items.length && !this.chunks.complete; i++) {
      try {
        text += this.frameOfItem(items[i]!);
      } catch (error) {
        if (text === "") throw error;
        this.failure = error;
        break;
      }
    }
    return text;
  }

  /**
   * The next item or batch; undefined when the stream is over: once every choice has its finish
   * reason, when the grace has passed or the connection broke off.
   */
  async read(rest: Items): Promise<IteratorResult<Item> | undefined> {
    if (!this.chunks.finished) return rest.next();
    if (this.graceEnds === 0) this.graceEnds = Date.now() + STREAM_END_GRACE_MS;
    let result: IteratorResult<Item> | typeof GRACE_OVER;
    try {
      result = await readWithin(rest.next(), this.graceEnds - Date.now());
    } catch (error) {
      // The answer is whole: a connection that breaks off now has lost nothing but its end.
      if (isConnectionFailure(this.options.classify ? this.options.classify(error) : error)) return undefined;
      throw error;
    }
    if (result !== GRACE_OVER) return result;
    // The read waits on an upstream that holds its connection open: close it, so that the read
    // ends and the provider's iterator can be let go of (`return()` waits for a pending read).
    this.readPending = true;
    this.options.call?.cancel();
    return undefined;
  }

  /** The frame of one item; "" when it is dropped. */
  private frameOfItem(item: ChatStreamItem): string {
    if (typeof item === "string") {
      const use = this.chunks.take(parseEventData(item, this.options.collect ? MAX_UPSTREAM_DEPTH : undefined));
      if (use === DROP) return "";
      return sseDataLines(use === RELAY_WITHOUT_TIER ? removeServiceTier(item) : item);
    }
    const use = this.chunks.take(item);
    if (use === DROP) return "";
    const text = rawJsonOf(item);
    if (text !== undefined) return sseData(use === RELAY_WITHOUT_TIER ? removeServiceTier(text) : text);
    if (use === RELAY_WITHOUT_TIER) {
      const { service_tier: _dropped, ...rest } = item;
      return sseData(JSON.stringify(rest));
    }
    return sseData(JSON.stringify(item));
  }
}

/**
 * Opens a provider's chat stream for the client: reads and frames items (or batches) until the
 * first frame to send before returning, so that a stream that fails, is unreadable or ends before
 * anything is sent is an error reply with its status (thrown); until then the call's timeout
 * bounds the whole wait (`FramedCall.streaming`). The frames that follow never throw. A provider's
 * `chatStream` may hand over an array of items per upstream read: their frames are yielded as one
 * string.
 */
export async function openChatStreamFrames(items: Items, options: StreamFrameOptions): Promise<AsyncGenerator<string, void, undefined>> {
  const framer = new Framer(options);
  let first = "";
  try {
    // A dropped usage chunk is no frame: nothing to send yet.
    while (first === "") {
      const read = await items.next();
      if (read.done) {
        framer.chunks.end();
        break;
      }
      first = framer.frame(read.value);
    }
  } catch (error) {
    await releaseItems(items);
    throw error;
  }
  options.call?.streaming();
  return chatStreamFrames(framer, first, items);
}

/** Ends a provider's iterator early (which lets go of its upstream body); its own failure is not the stream's. */
async function releaseItems(items: Items): Promise<void> {
  try {
    await items.return?.();
  } catch {
    // Released as far as it can be: the error that ended the stream is the one to report.
  }
}

async function* chatStreamFrames(framer: Framer, first: string, rest: Items): AsyncGenerator<string, void, undefined> {
  const { options } = framer;
  try {
    let frame = first;
    for (;;) {
      if (frame) yield frame;
      if (framer.failure !== undefined) throw framer.failure;
      if (framer.chunks.complete) break;
      const result = await framer.read(rest);
      if (result === undefined || result.done) break;
      frame = framer.frame(result.value);
    }
    // A client that left is not answered, and its reply not stored, however the stream ended.
    if (options.clientGone()) return;
    framer.chunks.end();
    await options.beforeDone?.();
    yield DONE_FRAME;
  } catch (error) {
    if (options.clientGone()) return;
    const mapped = options.classify ? options.classify(error) : error;
    options.onError?.(mapped);
    yield chatErrorFrame(mapped);
  } finally {
    // An async iterator's `return()` waits for a pending read, which the call's cancel ends (or, for
    // a provider that does not pass the call's abort on, its timeout): the stream does not wait.
    if (framer.readPending) void releaseItems(rest);
    else await rest.return?.();
  }
}
