/**
 * @modelmux/provider-openai: OpenAI's Chat Completions API, and every server that speaks it
 * (Groq, Together, Mistral, DeepSeek, vLLM, Ollama's `/v1`, LM Studio…); also OpenAI's image
 * generation, embeddings, and its Responses API, forwarded as is. The core's provider kit does the transport
 * and reads the wire format (`openaiShapedProvider`, docs/plugins.md, "The provider kit"); this
 * plugin adds what is OpenAI's own: its headers, its capability defaults (`capabilities.ts`) and
 * its image models (`images.ts`).
 */
import { apiRoot, defineProvider, errorMapper, openaiShapedProvider, upstreamHeaders, type FromSchema, type PluginContext, type Provider } from "@modelmux/core";
import { openaiCapabilities } from "./capabilities.ts";
import { openaiImageOptions, toImageRequest } from "./images.ts";

export const DEFAULT_BASE_URL = "https://api.openai.com/v1";

/**
 * The keys of a `providers.<name>` block that this plugin reads (README, "Options"), validated by
 * the core with Ajv before the server starts; typos in a key are an error.
 */
export const optionsSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    // The API root, as the official SDK takes it: requests go to `${base_url}/chat/completions`.
    // The core's `http-url` format: `uri` alone would take `localhost:8080` (scheme "localhost").
    base_url: { type: "string", format: "http-url", default: DEFAULT_BASE_URL, description: "API root, e.g. https://api.groq.com/openai/v1" },
    // Sent as `Authorization: Bearer …` when set. Local servers (Ollama, vLLM) need none.
    api_key: { type: "string" },
    // Sent as `OpenAI-Organization` and `OpenAI-Project`.
    organization: { type: "string" },
    project: { type: "string" },
    // Extra headers for every upstream request; they win over the ones above.
    headers: { type: "object", additionalProperties: { type: "string" } },
    // How the server wants the final assistant message of a stream continuation marked (README,
    // "Stream continuation"); the `prefill` capability, off by default, lets the core send one.
    prefill_style: { type: "string", enum: ["plain", "prefix", "continue_final_message"], default: "plain" },
  },
} as const;

export type OpenAIProviderOptions = FromSchema<typeof optionsSchema>;

function setup(options: OpenAIProviderOptions, ctx: PluginContext): Provider {
  const headers = upstreamHeaders({
    apiKey: options.api_key,
    fixed: { "openai-organization": options.organization || undefined, "openai-project": options.project || undefined },
    extra: options.headers,
  });
  return openaiShapedProvider(ctx, {
    root: apiRoot(options.base_url, DEFAULT_BASE_URL),
    headers,
    errors: errorMapper({ provider: ctx.name, secrets: headers.secrets }),
    capabilities: openaiCapabilities,
    // OpenAI logs `X-Client-Request-Id` with the request, so the router's id finds it there too.
    requestIdHeader: "x-client-request-id",
    images: { options: openaiImageOptions, body: toImageRequest },
    embeddings: true,
    responses: true,
    prefillStyle: options.prefill_style,
  });
}

/**
 * The provider plugin. In the config:
 * @example
 * providers:
 *   openai: { plugin: provider-openai, api_key: ${OPENAI_API_KEY}, models: [gpt-4o-mini] }
 *   ollama: { plugin: provider-openai, base_url: http://127.0.0.1:11434/v1, models: [llama3.1:8b] }
 */
export default defineProvider({ name: "openai", optionsSchema, setup });
