/**
 * @modelmux/provider-anthropic: Anthropic's Messages API (Claude) behind the router's
 * OpenAI-compatible chat completions. Transport only: the translation lives in `request.ts`,
 * `response.ts`, `stream.ts` and `errors.ts`, the capability defaults in `capabilities.ts`.
 */
import { defineProvider, postUpstream, readUpstreamText, type ChatRequest, type HttpResponse, type JsonSchema, type PluginContext, type Provider, type ProviderCall } from "@modelmux/core";
import { anthropicCapabilities } from "./capabilities.ts";
import { toProviderError } from "./errors.ts";
import { toAnthropicRequest } from "./request.ts";
import { parseMessageText } from "./response.ts";
import { readMessageStreamBatches } from "./stream.ts";

/** The keys of a `providers.<name>` block that this plugin reads (README, "Options"). */
export interface AnthropicProviderOptions {
  /**
   * The API root, as the official SDK takes it: requests go to `${base_url}/v1/messages`.
   * Default `https://api.anthropic.com`. A trailing slash is ignored.
   */
  base_url?: string;
  /** Sent as `x-api-key` when set. Never logged, and removed from upstream error messages. */
  api_key?: string;
  /** Sent as `anthropic-version`. Default `2023-06-01`. */
  anthropic_version?: string;
  /** `max_tokens` for requests that set none: Anthropic requires it. Default 4096. */
  default_max_tokens?: number;
  /** Extra headers for every request (e.g. `anthropic-beta`); they win over the ones above. */
  headers?: Record<string, string>;
}

/** The defaults of the options of the same names. */
export const DEFAULT_BASE_URL = "https://api.anthropic.com";
export const DEFAULT_ANTHROPIC_VERSION = "2023-06-01";
export const DEFAULT_MAX_TOKENS = 4096;

/** Validated by the core with Ajv before the server starts; typos in a key are an error. */
export const optionsSchema: JsonSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    base_url: { type: "string", format: "http-url", default: DEFAULT_BASE_URL, description: "API root; requests go to ${base_url}/v1/messages" },
    api_key: { type: "string" },
    anthropic_version: { type: "string", minLength: 1, default: DEFAULT_ANTHROPIC_VERSION },
    default_max_tokens: { type: "integer", minimum: 1, default: DEFAULT_MAX_TOKENS },
    headers: { type: "object", additionalProperties: { type: "string" } },
  },
};

/** The endpoint for a `base_url`: the SDK's convention, tolerant of a trailing slash. */
export function messagesUrl(baseUrl: string = DEFAULT_BASE_URL): string {
  return `${baseUrl.replace(/\/+$/, "")}/v1/messages`;
}

/**
 * The headers every request carries. Names are lower-cased and the `headers` option comes last,
 * so an entry there overrides a built-in header whatever its case (e.g. a gateway that wants its
 * own `authorization` instead of `x-api-key`).
 */
export function buildHeaders(options: AnthropicProviderOptions, accept: string): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept,
    "anthropic-version": options.anthropic_version ?? DEFAULT_ANTHROPIC_VERSION,
  };
  if (options.api_key) headers["x-api-key"] = options.api_key;
  for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
  return headers;
}

function setup(options: AnthropicProviderOptions, ctx: PluginContext): Provider {
  const url = messagesUrl(options.base_url);
  const secret = options.api_key || undefined;
  const requestOptions = { defaultMaxTokens: options.default_max_tokens ?? DEFAULT_MAX_TOKENS };
  const jsonHeaders = buildHeaders(options, "application/json");
  const streamHeaders = buildHeaders(options, "text/event-stream");

  /** Sends the request; any reply that is not a success is thrown as the mapped error. */
  function send(request: ChatRequest, call: ProviderCall, headers: Record<string, string>): Promise<HttpResponse> {
    return postUpstream(ctx, call, {
      url,
      headers,
      body: toAnthropicRequest(request, call.model, requestOptions),
      toError: (reply) => toProviderError(ctx.name, reply, secret),
    });
  }

  return {
    capabilities: anthropicCapabilities,

    async chat(request: ChatRequest, call: ProviderCall) {
      const res = await send(request, call, jsonHeaders);
      return parseMessageText(await readUpstreamText(ctx, call, res), { provider: ctx.name, model: call.model });
    },

    // One batch of chunks per upstream read: the core takes one async step per read, not per event.
    async chatStream(request: ChatRequest, call: ProviderCall) {
      const res = await send(request, call, streamHeaders);
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
export default defineProvider<AnthropicProviderOptions>({ name: "anthropic", optionsSchema, setup });
