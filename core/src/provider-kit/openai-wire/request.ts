/**
 * Normalised requests -> OpenAI's request bodies, for every OpenAI-shaped provider
 * (docs/plugins.md, "The provider kit"). The normalised form *is* OpenAI's wire format, and the
 * core has already removed what it serves itself (`store`, `metadata`) and set the stream fields,
 * so this is a passthrough with two deliberate changes.
 */
import type { EmbeddingsRequest } from "../../schemas/embeddings-request.ts";
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

/**
 * How an OpenAI-compatible server wants a final assistant message marked to continue it rather
 * than answer after it (docs/plugins.md, "Stream continuation"):
 * - `plain`: sent as it is (servers that continue a final assistant message by themselves);
 * - `prefix`: `"prefix": true` on that message (Mistral; DeepSeek's beta API);
 * - `continue_final_message`: top-level `continue_final_message: true` and
 *   `add_generation_prompt: false` (vLLM, SGLang; the two cannot both be on).
 */
export type PrefillStyle = "plain" | "prefix" | "continue_final_message";

/**
 * The body of a continuation (`ProviderCall.continuation`): the chat request's body, with its final
 * assistant message marked as `style` says.
 * @example
 * toOpenAIContinuationRequest({ model: "m", messages: [user, { role: "assistant", content: "One," }] }, "m", "prefix")
 * // { model: "m", messages: [user, { role: "assistant", content: "One,", prefix: true }] }
 */
export function toOpenAIContinuationRequest(request: ChatRequest, model: string, style: PrefillStyle): ChatRequest {
  const body = upstreamBody(request, model);
  if (style === "continue_final_message") {
    body.continue_final_message = true;
    body.add_generation_prompt = false;
  } else if (style === "prefix") {
    const last = request.messages.at(-1);
    if (last?.role === "assistant") body.messages = [...request.messages.slice(0, -1), { ...last, prefix: true }];
  }
  return body as unknown as ChatRequest;
}

/** The image request's body (`POST /images/generations`), built the same way. */
export function toOpenAIImageRequest(request: ImageGenerationRequest, model: string): Record<string, unknown> {
  return upstreamBody(request, model);
}

/** The embeddings request's body (`POST /embeddings`), built the same way: the client's fields, the bare model. */
export function toOpenAIEmbeddingsRequest(request: EmbeddingsRequest, model: string): Record<string, unknown> {
  return upstreamBody(request, model);
}
