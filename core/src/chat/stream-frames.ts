/**
 * Turns a provider's stream items into the SSE frames the client gets (contract §8): one
 * `data:` event per chunk, `data: [DONE]` at the end, one error event (and no `[DONE]`) when the
 * provider fails mid-stream. Chunks that arrive as JSON strings are passed through as they are;
 * only a usage chunk is parsed, and only to read the usage.
 */
import { toModelmuxError } from "../errors.ts";
import type { ChatCompletionChunk, ChatStreamItem, Usage } from "../types/chat.ts";
import { sseData } from "../utils/sse-write.ts";
import { removeServiceTier } from "./service-tier.ts";
import { EMPTY_CHOICES, readUsageChunk } from "./usage-chunk.ts";

export interface StreamFrameOptions {
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

const DONE = "data: [DONE]\n\n";
function frameOfString(json: string, options: StreamFrameOptions): string | undefined {
  // A usage-only chunk is the one chunk with empty choices; everything else is passed through.
  if (EMPTY_CHOICES.test(json) && readUsageChunk(json, options)) return undefined;
  if (!options.keepServiceTier) json = removeServiceTier(json);
  return sseData(json);
}

function frameOfChunk(chunk: ChatCompletionChunk, options: StreamFrameOptions): string | undefined {
  if (chunk.usage) options.onUsage?.(chunk.usage);
  if (chunk.choices.length === 0 && chunk.usage && !options.includeUsage) return undefined;
  if (!options.keepServiceTier && "service_tier" in chunk) {
    const { service_tier: _dropped, ...rest } = chunk;
    return sseData(JSON.stringify(rest));
  }
  return sseData(JSON.stringify(chunk));
}

/** The frame of one item, or undefined when it is dropped. */
function frameOfItem(item: ChatStreamItem, options: StreamFrameOptions): string | undefined {
  options.collect?.(item);
  return typeof item === "string" ? frameOfString(item, options) : frameOfChunk(item, options);
}

/** The frames of a batch of items (one upstream read), joined: they are written together anyway. */
function frameOfBatch(items: readonly ChatStreamItem[], options: StreamFrameOptions): string {
  let text = "";
  for (let i = 0; i < items.length; i++) {
    const frame = frameOfItem(items[i]!, options);
    if (frame !== undefined) text += frame;
  }
  return text;
}

/**
 * Yields the frames of a chat stream. `first` is the already-read first item (reading it before
 * sending headers lets an early failure become a proper error reply). A provider's
 * `chatStreamBatches` hands over arrays of items: their frames are yielded as one string. Never
 * throws.
 */
export async function* chatStreamFrames(
  first: IteratorResult<ChatStreamItem | readonly ChatStreamItem[]>,
  rest: AsyncIterator<ChatStreamItem | readonly ChatStreamItem[]>,
  options: StreamFrameOptions,
): AsyncGenerator<string, void, undefined> {
  try {
    for (let result = first; !result.done; result = await rest.next()) {
      const item = result.value;
      const frame = Array.isArray(item) ? frameOfBatch(item, options) : frameOfItem(item as ChatStreamItem, options);
      if (frame) yield frame;
    }
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
