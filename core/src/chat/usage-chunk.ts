/**
 * The usage chunk of a chat stream, when it comes as JSON text (a provider's raw chunk, a relayed
 * event): the one chunk with empty choices. Read for its usage (rate limits, the access log) and
 * dropped for a client that did not ask for it (`stream_options.include_usage`).
 */
import { upstreamError } from "../errors.ts";
import type { ChatCompletionChunk, Usage } from "../types/chat.ts";

export interface UsageChunkOptions {
  includeUsage: boolean;
  onUsage?: ((usage: Usage) => void) | undefined;
}

/**
 * What `readUsageChunk` found: no usage (another chunk with empty choices, such as Azure's
 * `prompt_filter_results`), or the usage chunk, kept for the client or dropped.
 */
export type UsageChunkRead = "none" | "keep" | "drop";

/**
 * For a chunk with empty choices (`ChunkScanner.emptyChoices`): reads its usage when it has one, and
 * says whether the client gets it. Throws 502 `upstream_error` for a chunk that cannot be read.
 */
export function readUsageChunk(json: string, options: UsageChunkOptions): UsageChunkRead {
  if (!json.includes('"usage"')) return "none";
  let chunk: ChatCompletionChunk | null;
  try {
    chunk = JSON.parse(json) as ChatCompletionChunk | null;
  } catch (error) {
    throw upstreamError("The usage chunk of the stream is not valid JSON.", error);
  }
  const usage: unknown = typeof chunk === "object" && chunk !== null ? chunk.usage : undefined;
  if (usage === undefined || usage === null) return "none";
  if (typeof usage !== "object" || Array.isArray(usage)) throw upstreamError("The usage chunk of the stream has no usage object.");
  options.onUsage?.(usage as Usage);
  return options.includeUsage ? "keep" : "drop";
}
