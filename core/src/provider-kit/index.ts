/**
 * The provider kit (docs/plugins.md, "The provider kit"): what every provider plugin would
 * otherwise write again: the API root, the headers, error replies with credentials removed,
 * capability tables, and a whole provider for an OpenAI-shaped upstream.
 */
export { apiRoot, joinUrl } from "./base-url.ts";
export { upstreamHeaders, withCallHeader, type HeaderOptions, type UpstreamHeaders } from "./headers.ts";
export { redactSecrets } from "./redact.ts";
export {
  errorMapper,
  parseErrorBody,
  readErrorPayload,
  readRetryAfter,
  retryDelaySeconds,
  type ErrorMapper,
  type ErrorMapperOptions,
  type UpstreamErrorInfo,
} from "./error-reply.ts";
export { capabilityTable, type CapabilityTableOptions } from "./capability-table.ts";
export { openaiShapedProvider, type OpenAIShapedImages, type OpenAIShapedProviderOptions } from "./openai-shaped.ts";
export { defineOpenAIShapedProvider, openaiShapedOptionsSchema, type OpenAIShapedDescription, type OpenAIShapedOptions } from "./openai-shaped-definition.ts";
export { isNormalCompletion, mapFinishReason, parseCompletionText as parseOpenAICompletionText, toChatCompletion as toOpenAIChatCompletion } from "./openai-wire/completion.ts";
export { toOpenAIContinuationRequest, toOpenAIEmbeddingsRequest, toOpenAIImageRequest, toOpenAIRequest, type PrefillStyle } from "./openai-wire/request.ts";
export { parseImagesText as parseOpenAIImagesText } from "./openai-wire/images.ts";
export { parseEmbeddingsText as parseOpenAIEmbeddingsText } from "./openai-wire/embeddings.ts";
export { openaiStreamErrorOf } from "./openai-wire/stream-errors.ts";
