/**
 * An OpenAI SSE reply body -> the stream items the core writes to the client. Each `data:` payload
 * is already a `chat.completion.chunk` in the client's format, so it is passed on as the raw JSON
 * string, never serialised again. Only payloads that may be error objects are parsed here; the
 * core checks every chunk and that the stream is whole (README "Errors").
 */
import { readSseEventBatches, upstreamError, type ChatStreamItem, type HttpBody, toBodyReadError } from "@modelmux/core";
import { toStreamError } from "./errors.ts";

/**
 * An error payload always contains the token `"error"` (as a key, or vLLM's `"object":"error"`),
 * while an ordinary chunk almost never does: inside content its quotes are escaped. So this cheap
 * test skips `JSON.parse` for nearly every chunk; the rare false positive is parsed and passed on.
 */
const MAY_BE_ERROR = '"error"';
/**
 * Part of `MAY_BE_ERROR` whose first letter is rare in a chunk: `includes` looks for the first
 * letter and compares from there, so a search for `"error"` stops at every quote of the JSON, a
 * search for this one at a few `r`s. Only text that has it can have `MAY_BE_ERROR`.
 */
const MAY_BE_ERROR_TAIL = 'rror"';

function isErrorPayload(payload: unknown): boolean {
  if (typeof payload !== "object" || payload === null) return false;
  const body = payload as Record<string, unknown>;
  // OpenAI: {"error": {...}}; vLLM: {"object": "error", "message": ...}. A chunk has `choices`.
  return !Array.isArray(body.choices) && (body.error !== undefined || body.object === "error");
}

export interface ReadChatStreamOptions {
  /** The provider's name, for errors. */
  provider: string;
  /** The call's timeout, for the 504 of a stalled body. */
  timeoutMs: number;
  /** The configured API key, removed from any error message. */
  secret?: string;
}

/**
 * Yields the chunks of an OpenAI-style SSE body as their raw JSON strings, one batch per upstream
 * read (what `chatStreamBatches` hands the core), in order, and stops at `[DONE]`. Throws 502
 * `upstream_error` (after a batch of the chunks before it) for an error event, for a body that
 * breaks off, and for a body that ends without sending a single event (e.g. a server that ignored
 * `stream: true`). Whether each event is a chunk, and whether the stream is whole, the core checks.
 */
export async function* readChatStreamBatches(body: HttpBody, { provider, timeoutMs, secret }: ReadChatStreamOptions): AsyncGenerator<string[]> {
  let events = 0;
  try {
    for await (const batch of readSseEventBatches(body)) {
      const chunks: string[] = [];
      for (let i = 0; i < batch.length; i++) {
        const { event, data } = batch[i]!;
        if (data === "[DONE]") {
          if (chunks.length > 0) yield chunks;
          return;
        }
        if (!data.trim()) continue;
        events++;
        // The cheap test first: nearly every chunk lacks the rare tail and skips the parse.
        const error = event === "error" || data.includes(MAY_BE_ERROR_TAIL) ? streamErrorOf(event, data, { provider, secret }) : undefined;
        if (error !== undefined) {
          if (chunks.length > 0) yield chunks;
          throw error;
        }
        chunks.push(data);
      }
      if (chunks.length > 0) yield chunks;
    }
  } catch (error) {
    throw toBodyReadError(error, provider, timeoutMs);
  }
  if (events === 0) throw upstreamError(`${provider}: the reply to a streamed request carried no events.`);
}

/**
 * The error an event of an OpenAI-style stream reports, or undefined for a chunk (what
 * `chatStreamEvents` hands the core as `errorOf`).
 */
export function streamErrorOf(event: string | undefined, data: string, { provider, secret }: Pick<ReadChatStreamOptions, "provider" | "secret">): unknown {
  if (event !== "error" && !data.includes(MAY_BE_ERROR)) return undefined;
  let payload: unknown;
  try {
    payload = JSON.parse(data);
  } catch {
    // Not JSON: a chunk like any other, unless the event says it is an error.
  }
  return event === "error" || isErrorPayload(payload) ? toStreamError(provider, payload ?? { error: data }, secret) : undefined;
}

/** The same chunks one at a time (the `chatStream` contract). */
export async function* readChatStream(body: HttpBody, options: ReadChatStreamOptions): AsyncGenerator<ChatStreamItem> {
  for await (const chunks of readChatStreamBatches(body, options)) for (let i = 0; i < chunks.length; i++) yield chunks[i]!;
}
