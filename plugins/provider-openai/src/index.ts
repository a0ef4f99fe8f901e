/**
 * @modelmux/provider-openai: OpenAI's Chat Completions API, and every server that speaks it
 * (Groq, Together, Mistral, DeepSeek, vLLM, Ollama's `/v1`, LM Studio…); also OpenAI's image
 * generation and its Responses API, forwarded as is. Transport only: the translation lives in
 * `request.ts`, `response.ts`, `stream.ts`, `images.ts` and `errors.ts`.
 */
import {
  defineProvider,
  headerValue,
  postUpstream,
  readUpstreamText,
  sendUpstream,
  type ChatRequest,
  type HttpResponse,
  type JsonSchema,
  type PluginContext,
  type Provider,
  type ProviderCall,
} from "@modelmux/core";
import { openaiCapabilities } from "./capabilities.ts";
import { toProviderError } from "./errors.ts";
import { openaiImageOptions, parseImagesText, toOpenAIImageRequest } from "./images.ts";
import { toOpenAIRequest } from "./request.ts";
import { parseCompletionText } from "./response.ts";
import { streamErrorOf } from "./stream.ts";

/** The keys of a `providers.<name>` block that this plugin reads (README, "Options"). */
export interface OpenAIProviderOptions {
  /**
   * The API root, as the official SDK takes it: requests go to `${base_url}/chat/completions`.
   * Default `https://api.openai.com/v1`. A trailing slash is ignored.
   */
  base_url?: string;
  /** Sent as `Authorization: Bearer …` when set. Local servers (Ollama, vLLM) need none. */
  api_key?: string;
  /** Sent as `OpenAI-Organization`. */
  organization?: string;
  /** Sent as `OpenAI-Project`. */
  project?: string;
  /** Extra headers for every upstream request; they win over the ones above. */
  headers?: Record<string, string>;
}

export const DEFAULT_BASE_URL = "https://api.openai.com/v1";

/** Validated by the core with Ajv before the server starts; typos in a key are an error. */
export const optionsSchema: JsonSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    // The core's `http-url` format: `uri` alone would take `localhost:8080` (scheme "localhost").
    base_url: { type: "string", format: "http-url", default: DEFAULT_BASE_URL, description: "API root, e.g. https://api.groq.com/openai/v1" },
    api_key: { type: "string" },
    organization: { type: "string" },
    project: { type: "string" },
    headers: { type: "object", additionalProperties: { type: "string" } },
  },
};

/** The endpoint for a `base_url`: the SDK's convention, tolerant of a trailing slash. */
export function chatCompletionsUrl(baseUrl: string = DEFAULT_BASE_URL): string {
  return `${baseUrl.replace(/\/+$/, "")}/chat/completions`;
}

/**
 * The headers every request carries, built once per kind of reply in `setup`. Names are
 * lower-cased and the `headers` option comes last, so an entry there overrides a built-in header
 * whatever its case (e.g. a gateway that wants its own `authorization`).
 */
export function buildHeaders(options: OpenAIProviderOptions, accept: string): Record<string, string> {
  const headers: Record<string, string> = { "content-type": "application/json", accept };
  if (options.api_key) headers.authorization = `Bearer ${options.api_key}`;
  if (options.organization) headers["openai-organization"] = options.organization;
  if (options.project) headers["openai-project"] = options.project;
  for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
  return headers;
}

function setup(options: OpenAIProviderOptions, ctx: PluginContext): Provider {
  const url = chatCompletionsUrl(options.base_url);
  const root = (options.base_url ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
  const secret = options.api_key || undefined;
  const jsonHeaders = buildHeaders(options, "application/json");
  const streamHeaders = buildHeaders(options, "text/event-stream");

  /** Sends the request; any reply that is not a success is thrown as the mapped error. */
  function send(request: ChatRequest, call: ProviderCall, headers: Record<string, string>): Promise<HttpResponse> {
    return postUpstream(ctx, call, {
      url,
      // OpenAI logs `X-Client-Request-Id` with the request, so the router's id finds it there too.
      headers: { ...headers, "x-client-request-id": call.requestId },
      body: toOpenAIRequest(request, call.model),
      toError: (reply) => toProviderError(ctx.name, reply, secret),
    });
  }

  return {
    capabilities: openaiCapabilities,

    async chat(request: ChatRequest, call: ProviderCall) {
      const res = await send(request, call, jsonHeaders);
      return parseCompletionText(await readUpstreamText(ctx, call, res), { provider: ctx.name, model: call.model, serviceTier: request.service_tier });
    },

    // The upstream streams the client's own format: the core relays it in whole reads, so this
    // provider needs no `chatStream` (docs/plugins.md, "Provider plugins").
    async chatStreamEvents(request: ChatRequest, call: ProviderCall) {
      const res = await send(request, call, streamHeaders);
      return { body: res.body, errorOf: (event: string | undefined, data: string) => streamErrorOf(event, data, { provider: ctx.name, secret }) };
    },

    imageOptions: openaiImageOptions,

    async images(request, call) {
      const res = await postUpstream(ctx, call, {
        url: `${root}/images/generations`,
        headers: { ...jsonHeaders, "x-client-request-id": call.requestId },
        body: toOpenAIImageRequest(request, call.model),
        toError: (reply) => toProviderError(ctx.name, reply, secret),
      });
      return parseImagesText(await readUpstreamText(ctx, call, res), ctx.name);
    },

    async responses(request, call) {
      const headers: Record<string, string> = { ...(request.stream ? streamHeaders : jsonHeaders), "x-client-request-id": call.requestId };
      if (request.body === undefined) delete headers["content-type"];
      const res = await sendUpstream(ctx, call, {
        url: root + request.path,
        method: request.method,
        headers,
        body: request.body,
        toError: (reply) => toProviderError(ctx.name, reply, secret),
      });
      return { status: res.status, contentType: headerValue(res.headers, "content-type") ?? "application/json", body: res.body };
    },
  };
}

/**
 * The provider plugin. In the config:
 * @example
 * providers:
 *   openai: { plugin: provider-openai, api_key: ${OPENAI_API_KEY}, models: [gpt-4o-mini] }
 *   ollama: { plugin: provider-openai, base_url: http://127.0.0.1:11434/v1, models: [llama3.1:8b] }
 */
export default defineProvider<OpenAIProviderOptions>({ name: "openai", optionsSchema, setup });
