/**
 * The errors inside an OpenAI SSE reply body (docs/plugins.md, "The provider kit"). Each `data:`
 * payload is already a `chat.completion.chunk` in the client's format, so the core relays the body
 * as it is (`chatStreamEvents`) and checks every chunk and that the stream is whole (README
 * "Errors"); it asks the provider only about the events that may be errors.
 */
import type { ErrorMapper } from "../error-reply.ts";

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
 * The error an event of an OpenAI-style stream reports, mapped by the provider's `errors`
 * (`errorMapper`), or undefined for a chunk: what `chatStreamEvents` hands the core as `errorOf`.
 */
export function openaiStreamErrorOf(event: string | undefined, data: string, errors: Pick<ErrorMapper, "fromEvent">): unknown {
  if (event !== "error" && !data.includes(MAY_BE_ERROR)) return undefined;
  let payload: unknown;
  try {
    payload = JSON.parse(data);
  } catch {
    // Not JSON: a chunk like any other, unless the event says it is an error.
  }
  return event === "error" || isErrorPayload(payload) ? errors.fromEvent(payload ?? { error: data }) : undefined;
}
