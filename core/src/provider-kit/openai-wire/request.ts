/**
 * Normalised requests -> OpenAI's request bodies, for every OpenAI-shaped provider
 * (docs/plugins.md, "The provider kit"). The normalised form *is* OpenAI's wire format, and the
 * core has already removed what it serves itself (`store`, `metadata`) and set the stream fields,
 * so this is a passthrough with two deliberate changes.
 */
import type { ImageGenerationRequest } from "../../schemas/images-request.ts";
import type { ChatRequest } from "../../types/chat.ts";

/**
 * - `model` becomes the bare upstream id given in the call.
 * - Top-level `null`s are dropped: OpenAI reads them as "use the default" anyway, and some
 *   compatible servers (older vLLM, LM Studio) reject a `null` where they expect a value. Nested
 *   values (e.g. an assistant message's `content: null` beside its `tool_calls`) are untouched.
 */
function upstreamBody(fields: object, model: string): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) if (value !== null && value !== undefined) body[key] = value;
  body.model = model;
  return body;
}

/**
 * The chat request's body.
 * @example
 * toOpenAIRequest({ model: "gpt-4o", messages, temperature: null }, "gpt-4o")
 * // { model: "gpt-4o", messages }
 */
export function toOpenAIRequest(request: ChatRequest, model: string): ChatRequest {
  return upstreamBody(request, model) as unknown as ChatRequest;
}

/** The image request's body (`POST /images/generations`), built the same way. */
export function toOpenAIImageRequest(request: ImageGenerationRequest, model: string): Record<string, unknown> {
  return upstreamBody(request, model);
}
