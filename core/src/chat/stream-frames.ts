/**
 * Turns a provider's stream items into the SSE frames the client gets (contract §8): one
 * `data:` event per chunk, `data: [DONE]` at the end, one error event (and no `[DONE]`) when the
 * provider fails mid-stream. Chunks that arrive as JSON strings are passed through as they are;
 * only a usage chunk is parsed, and only to read the usage.
 *
 * Every item must be a chunk, and the stream whole (`chunk-check.ts`): an item that is not a chunk
 * is the upstream's failure, and a stream that ends before each choice has its finish reason ends
 * with the error event (or is a 502 when nothing was sent yet). The usage chunk that follows the
 * last finish reason completes the stream: the provider's iterator is not read any further.
 */
import { toModelmuxError } from "../errors.ts";
import type { ChatCompletionChunk, ChatStreamItem, Usage } from "../types/chat.ts";
import { sseData } from "../utils/sse-write.ts";
import { ChunkScanner, countObjectFinishReasons, isChunkObject, unfinishedStream, unreadableEvent } from "./chunk-check.ts";
import { removeServiceTier } from "./service-tier.ts";
import { readUsageChunk } from "./usage-chunk.ts";

export interface StreamFrameOptions {
  /** The provider's name, for the errors of an unreadable or unfinished stream. */
  provider: string;
  /** The request's `n`: how many finish reasons make the answer complete. Default 1. */
  choices?: number;
  /** The client asked for `stream_options.include_usage`. */
  includeUsage: boolean;
  /** The client set `service_tier`; otherwise it is removed from chunks (service-interface.md). */
  keepServiceTier: boolean;
  /** True once the client has gone: a failure is then no one's to hear about. */
  clientGone: () => boolean;
  /** Called with the usage of the reply, when the provider reported it. */
  onUsage?: (usage: Usage) => void;
  /** Maps a provider's failure to the error the client is told about. */
  classify?: (error: unknown) => unknown;
  /** Sees every item, the usage chunk included, before it is framed (`store: true` assembles them). */
  collect?: (item: ChatStreamItem) => void;
  /** Runs after the last item and before `[DONE]`; a failure becomes the stream's error event. */
  beforeDone?: () => Promise<void>;
  /** Called with a mid-stream failure, for the log. */
  onError?: (error: unknown) => void;
}

type Items = AsyncIterator<ChatStreamItem | readonly ChatStreamItem[]>;

const DONE = "data: [DONE]\n\n";

/** One stream's framing: its options, and what the integrity rules count. */
class Framer {
  /** Reads string items; counts the finish reasons of all items. */
  private readonly scanner: ChunkScanner;
  /** The usage chunk came after the last finish reason: nothing more is read. */
  complete = false;

  constructor(readonly options: StreamFrameOptions) {
    this.scanner = new ChunkScanner(options.choices);
  }

  /** The frames of an item or a batch (one upstream read), joined: they are written together anyway. */
  frame(value: ChatStreamItem | readonly ChatStreamItem[]): string {
    if (!Array.isArray(value)) return this.frameOfItem(value as ChatStreamItem) ?? "";
    const items = value as readonly ChatStreamItem[];
    let text = "";
    for (let i = 0; i < items.length && !this.complete; i++) {
      const frame = this.frameOfItem(items[i]!);
      if (frame !== undefined) text += frame;
    }
    return text;
  }

  /** At the stream's end: throws unless every choice had its finish reason. */
  checkFinished(): void {
    const { scanner } = this;
    if (!scanner.finished) throw unfinishedStream(this.options.provider, scanner.finishes, scanner.choices);
  }

  /** The frame of one item, or undefined when it is dropped. */
  private frameOfItem(item: ChatStreamItem): string | undefined {
    return typeof item === "string" ? this.frameOfString(item) : this.frameOfChunk(item);
  }

  private frameOfString(json: string): string | undefined {
    const { options, scanner } = this;
    if (!scanner.scan(json)) throw unreadableEvent(options.provider);
    options.collect?.(json);
    // A usage-only chunk is the one chunk with empty choices; everything else is passed through.
    if (scanner.emptyChoices) {
      const usage = readUsageChunk(json, options);
      if (usage !== "none" && scanner.finished) this.complete = true;
      if (usage === "drop") return undefined;
    }
    return sseData(options.keepServiceTier ? json : removeServiceTier(json));
  }

  private frameOfChunk(chunk: ChatCompletionChunk): string | undefined {
    const { options, scanner } = this;
    if (!isChunkObject(chunk)) throw unreadableEvent(options.provider);
    scanner.finishes += countObjectFinishReasons(chunk);
    options.collect?.(chunk);
    if (chunk.usage) {
      options.onUsage?.(chunk.usage);
      if (scanner.finished) this.complete = true;
    }
    if (chunk.choices.length === 0 && chunk.usage && !options.includeUsage) return undefined;
    if (!options.keepServiceTier && "service_tier" in chunk) {
      const { service_tier: _dropped, ...rest } = chunk;
      return sseData(JSON.stringify(rest));
    }
    return sseData(JSON.stringify(chunk));
  }
}

/**
 * Opens a provider's chat stream for the client: reads and frames its first item (or batch) before
 * returning, so that a stream that fails, is unreadable or ends before anything is sent is an
 * error reply with its status (thrown). The frames that follow never throw. A provider's
 * `chatStreamBatches` hands over arrays of items: their frames are yielded as one string.
 */
export async function openChatStreamFrames(items: Items, options: StreamFrameOptions): Promise<AsyncGenerator<string, void, undefined>> {
  const framer = new Framer(options);
  let first: string;
  try {
    const read = await items.next();
    if (read.done) framer.checkFinished();
    first = read.done ? "" : framer.frame(read.value);
  } catch (error) {
    await releaseItems(items);
    throw error;
  }
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
    if (first) yield first;
    while (!framer.complete) {
      const result = await rest.next();
      if (result.done) break;
      const frame = framer.frame(result.value);
      if (frame) yield frame;
    }
    framer.checkFinished();
    await options.beforeDone?.();
    yield DONE;
  } catch (error) {
    if (options.clientGone()) return;
    const mapped = options.classify ? options.classify(error) : error;
    options.onError?.(mapped);
    yield sseData(JSON.stringify(toModelmuxError(mapped).toEnvelope()));
  } finally {
    await rest.return?.();
  }
}
