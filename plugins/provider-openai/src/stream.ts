/**
 * An OpenAI SSE reply body -> the stream items the core writes to the client. Each `data:` payload
 * is already a `chat.completion.chunk` in the client's format, so it is passed on as the raw JSON
 * string: parsing and re-serialising every chunk would cost more than everything else the router
 * does per token. Only payloads that may be error objects are parsed.
 */
import { readSseEvents, upstreamError, type ChatStreamItem, toBodyReadError } from "@modelmux/core";
import type { Readable } from "node:stream";
import { toStreamError } from "./errors.ts";

/**
 * An error payload always contains the token `"error"` (as a key, or vLLM's `"object":"error"`),
 * while an ordinary chunk almost never does: inside content its quotes are escaped. So this cheap
 * test skips `JSON.parse` for nearly every chunk; the rare false positive is parsed and passed on.
 */
const MAY_BE_ERROR = '"error"';

function isErrorPayload(payload: unknown): boolean {
  if (typeof payload !== "object" || payload === null) return false;
  const body = payload as Record<string, unknown>;
  // OpenAI: {"error": {...}}; vLLM: {"object": "error", "message": ...}. A chunk has `choices`.
  return !Array.isArray(body.choices) && (body.error !== undefined || body.object === "error");
}

/**
 * Yields each chunk of an OpenAI-style SSE body as its raw JSON string, in order, and stops at
 * `[DONE]`. Throws 502 `upstream_error` for an error event, for a body that breaks off, and for a
 * body that ends without sending a single event (e.g. a server that ignored `stream: true`).
 */
export interface ReadChatStreamOptions {
  /** The provider's name, for errors. */
  provider: string;
  /** The call's timeout, for the 504 of a stalled body. */
  timeoutMs: number;
  /** The configured API key, removed from any error message. */
  secret?: string;
}

export async function* readChatStream(body: Readable, { provider, timeoutMs, secret }: ReadChatStreamOptions): AsyncGenerator<ChatStreamItem> {
  let events = 0;
  try {
    for await (const { event, data } of readSseEvents(body)) {
      if (data === "[DONE]") return;
      if (!data.trim()) continue;
      events++;
      if (event === "error" || data.includes(MAY_BE_ERROR)) {
        let payload: unknown;
        try {
          payload = JSON.parse(data);
        } catch {
          // Not JSON: fall through, it is passed on like any other payload.
        }
        if (event === "error" || isErrorPayload(payload)) throw toStreamError(provider, payload ?? { error: data }, secret);
      }
      yield data;
    }
  } catch (error) {
    throw toBodyReadError(error, provider, timeoutMs);
  }
  if (events === 0) throw upstreamError(`${provider}: the reply to a streamed request carried no events.`);
}
