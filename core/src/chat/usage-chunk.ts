/**
 * The usage chunk of a chat stream, when it comes as JSON text (a provider's raw chunk, a relayed
 * event): the one chunk with empty choices. Read for its usage (rate limits, the access log) and
 * dropped for a client that did not ask for it (`stream_options.include_usage`).
 */
import { upstreamError } from "../errors.ts";
import type { ChatCompletionChunk, Usage } from "../types/chat.ts";

/** Empty choices: a regex finds it faster than `includes`, whose search stops at every quote. */
export const EMPTY_CHOICES = /"choices"\s*:\s*\[\s*\]/;

export interface UsageChunkOptions {
  includeUsage: boolean;
  onUsage?: ((usage: Usage) => void) | undefined;
}

/**
 * For a chunk with empty choices (`EMPTY_CHOICES` matched it): reads its usage when it has one, and
 * says whether the client gets it. True when the chunk is to be dropped.
 */
export function readUsageChunk(json: string, options: UsageChunkOptions): boolean {
  if (!json.includes('"usage"')) return false;
  let chunk: ChatCompletionChunk;
  try {
    chunk = JSON.parse(json) as ChatCompletionChunk;
  } catch (error) {
    throw upstreamError("The usage chunk of the stream is not valid JSON.", error);
  }
  if (chunk.usage) options.onUsage?.(chunk.usage);
  return !options.includeUsage;
}
