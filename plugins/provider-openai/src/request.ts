/**
 * Normalised chat request -> OpenAI Chat Completions body. The normalised form *is* OpenAI's wire
 * format, and the core has already removed what it serves itself (`store`, `metadata`) and set the
 * stream fields, so this is a passthrough with two deliberate changes.
 */
import type { ChatRequest } from "@modelmux/core";

/**
 * Builds the upstream body.
 * - `model` becomes the bare upstream id given in the call.
 * - Top-level `null`s are dropped: OpenAI reads them as "use the default" anyway, and some
 *   compatible servers (older vLLM, LM Studio) reject a `null` where they expect a value. Nested
 *   values (e.g. an assistant message's `content: null` beside its `tool_calls`) are untouched.
 * @example
 * toOpenAIRequest({ model: "gpt-4o", messages, temperature: null }, "gpt-4o")
 * // { model: "gpt-4o", messages }
 */
export function toOpenAIRequest(request: ChatRequest, model: string): ChatRequest {
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(request)) if (value !== null && value !== undefined) body[key] = value;
  body.model = model;
  return body as unknown as ChatRequest;
}
