/**
 * @modelmux/provider-anthropic: Anthropic's Messages API (Claude) behind the router's
 * OpenAI-compatible chat completions. Transport only, with the core's provider kit (docs/plugins.md,
 * "The provider kit"): the translation lives in `request.ts`, `response.ts`, `stream.ts` and
 * `errors.ts`, the capability defaults in `capabilities.ts`.
 */
import {
  apiRoot,
  defineProvider,
  joinUrl,
  postUpstream,
  readUpstreamText,
  upstreamHeaders,
  type ChatRequest,
  type FromSchema,
  type HttpResponse,
  type PluginContext,
  type Provider,
  type ProviderCall,
} from "@modelmux/core";
import { anthropicCapabilities } from "./capabilities.ts";
import { anthropicErrors } from "./errors.ts";
import { toAnthropicRequest } from "./request.ts";
import { parseMessageText } from "./response.ts";
import { readMessageStreamBatches } from "./stream.ts";

/** The defaults of the options of the same names. */
export const DEFAULT_BASE_URL = "https://api.anthropic.com";
export const DEFAULT_ANTHROPIC_VERSION = "2023-06-01";
export const DEFAULT_MAX_TOKENS = 4096;

/**
 * The keys of a `providers.<name>` block that this plugin reads (README, "Options"), validated by
 * the core with Ajv before the server starts; typos in a key are an error.
 */
export const optionsSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    // The API root, as the official SDK takes it: requests go to `${base_url}/v1/messages`.
    base_url: { type: "string", format: "http-url", default: DEFAULT_BASE_URL, description: "API root; requests go to ${base_url}/v1/messages" },
    // Sent as `x-api-key` when set. Never logged, and removed from upstream error messages.
    api_key: { type: "string" },
    anthropic_version: { type: "string", minLength: 1, default: DEFAULT_ANTHROPIC_VERSION },
    // `max_tokens` for requests that set none: Anthropic requires it.
    default_max_tokens: { type: "integer", minimum: 1, default: DEFAULT_MAX_TOKENS },
    // Extra headers for every request (e.g. `anthropic-beta`); they win over the ones above.
    headers: { type: "object", additionalProperties: { type: "string" } },
  },
} as const;

export type AnthropicProviderOptions = FromSchema<typeof optionsSchema>;

function setup(options: AnthropicProviderOptions, ctx: PluginContext): Provider {
  const url = joinUrl(apiRoot(options.base_url, DEFAULT_BASE_URL), "/v1/messages");
  const requestOptions = { defaultMaxTokens: options.default_max_tokens ?? DEFAULT_MAX_TOKENS };
  const continuationOptions = { ...requestOptions, continuation: true };
  const headers = upstreamHeaders({
    apiKey: options.api_key,
    auth: "x-api-key",
    fixed: { "anthropic-version": options.anthropic_version ?? DEFAULT_ANTHROPIC_VERSION },
    extra: options.headers,
  });
  const secret = options.api_key || undefined;
  const { fromReply: toError } = anthropicErrors(ctx.name, headers.secrets);

  /** Sends the request; any reply that is not a success is thrown as the mapped error. */
  function send(request: ChatRequest, call: ProviderCall, sent: Readonly<Record<string, string>>): Promise<HttpResponse> {
    return postUpstream(ctx, call, { url, headers: sent, body: toAnthropicRequest(request, call.model, call.continuation ? continuationOptions : requestOptions), toError });
  }

  return {
    capabilities: anthropicCapabilities,

    async chat(request: ChatRequest, call: ProviderCall) {
      const res = await send(request, call, headers.json);
      return parseMessageText(await readUpstreamText(ctx, call, res), { provider: ctx.name, model: call.model });
    },

    // One batch of chunks per upstream read: the core takes one async step per read, not per event.
    async chatStream(request: ChatRequest, call: ProviderCall) {
      const res = await send(request, call, headers.stream);
      return readMessageStreamBatches(res.body, { provider: ctx.name, model: call.model, timeoutMs: call.timeoutMs, secret });
    },
  };
}

/**
 * The provider plugin. In the config:
 * @example
 * providers:
 *   anthropic: { plugin: provider-anthropic, api_key: ${ANTHROPIC_API_KEY}, models: [claude-sonnet-4-5] }
 */
export default defineProvider({ name: "anthropic", optionsSchema, setup });
