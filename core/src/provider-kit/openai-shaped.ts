/**
 * A whole provider for an upstream that speaks OpenAI's Chat Completions wire format
 * (docs/plugins.md, "The provider kit"): chat replies parsed and normalised (sent as their own
 * text when already normal), streams relayed by the core through `chatStreamEvents`, image
 * generation, embeddings and the Responses API when asked for. Everything is fixed at setup; a call makes
 * only its headers record, its body and its reply.
 */
import type { Capabilities } from "../capabilities.ts";
import type { PluginContext, Provider, ProviderCall } from "../plugin.ts";
import type { ImageGenerationRequest } from "../schemas/images-request.ts";
import type { ChatRequest } from "../types/chat.ts";
import type { ImageOption } from "../types/images.ts";
import { headerValue } from "../upstream/client.ts";
import { postUpstream, readUpstreamText, sendUpstream } from "../upstream/send.ts";
import { joinUrl } from "./base-url.ts";
import type { ErrorMapper } from "./error-reply.ts";
import { withCallHeader, type UpstreamHeaders } from "./headers.ts";
import { parseCompletionText } from "./openai-wire/completion.ts";
import { parseEmbeddingsText } from "./openai-wire/embeddings.ts";
import { parseImagesText } from "./openai-wire/images.ts";
import { toOpenAIContinuationRequest, toOpenAIEmbeddingsRequest, toOpenAIImageRequest, toOpenAIRequest, type PrefillStyle } from "./openai-wire/request.ts";
import { openaiStreamErrorOf } from "./openai-wire/stream-errors.ts";

/** Image generation of an OpenAI-shaped provider (`POST <root>/images/generations`). */
export interface OpenAIShapedImages {
  /** The optional image fields a model takes (`Provider.imageOptions`). */
  options(model: string): readonly ImageOption[];
  /** The request body; by default the client's fields without nulls, with the bare model id. */
  body?(request: ImageGenerationRequest, model: string): unknown;
}

/** What `openaiShapedProvider` needs, all of it made once at setup. */
export interface OpenAIShapedProviderOptions {
  /** The API root (`apiRoot`): requests go to `<root>/chat/completions`. */
  root: string;
  /** The merged headers (`upstreamHeaders`). */
  headers: UpstreamHeaders;
  /** The error mapping (`errorMapper`). */
  errors: ErrorMapper;
  /** The capability defaults of a bare model id (`capabilityTable`). */
  capabilities(model: string): Partial<Capabilities>;
  /** A header that carries the router's request id, for upstreams that log one (`x-client-request-id`). */
  requestIdHeader?: string;
  /** Image generation, for models with the `images` capability. */
  images?: OpenAIShapedImages;
  /**
   * Embeddings, for models with the `embeddings` capability: `POST <root>/embeddings` with the
   * client's body and the bare model id.
   */
  embeddings?: boolean;
  /** Forward the Responses API (`/v1/responses`) to `<root>/responses`. */
  responses?: boolean;
  /**
   * How the server wants the final assistant message of a continuation (`call.continuation`)
   * marked (`PrefillStyle`); default `plain`, sent as it is. Only continuations are marked: the
   * `prefill` capability, off unless the capability table or the config says so, is what lets the
   * core send one.
   */
  prefillStyle?: PrefillStyle;
}

/**
 * The `Provider` of an OpenAI-shaped upstream.
 * @example
 * setup(options, ctx) {
 *   const headers = upstreamHeaders({ apiKey: options.api_key, extra: options.headers });
 *   const errors = errorMapper({ provider: ctx.name, secrets: headers.secrets });
 *   return openaiShapedProvider(ctx, { root: apiRoot(options.base_url, DEFAULT), headers, errors, capabilities });
 * }
 */
export function openaiShapedProvider(ctx: PluginContext, options: OpenAIShapedProviderOptions): Provider {
  const { root, headers, errors, requestIdHeader, images, prefillStyle = "plain" } = options;
  const chatUrl = joinUrl(root, "/chat/completions");
  const toError = errors.fromReply;
  const errorOf = (event: string | undefined, data: string): unknown => openaiStreamErrorOf(event, data, errors);
  /** The call's headers: the record made at setup, or a copy with the request id. */
  const callHeaders = requestIdHeader
    ? (base: Readonly<Record<string, string>>, call: Pick<ProviderCall, "requestId">) => withCallHeader(base, requestIdHeader, call.requestId)
    : (base: Readonly<Record<string, string>>) => base;

  const bodyOf = (request: ChatRequest, call: ProviderCall) =>
    call.continuation ? toOpenAIContinuationRequest(request, call.model, prefillStyle) : toOpenAIRequest(request, call.model);
  const send = (request: ChatRequest, call: ProviderCall, base: Readonly<Record<string, string>>) =>
    postUpstream(ctx, call, { url: chatUrl, headers: callHeaders(base, call), body: bodyOf(request, call), toError });

  const provider: Provider = {
    capabilities: options.capabilities,

    async chat(request, call) {
      const res = await send(request, call, headers.json);
      return parseCompletionText(await readUpstreamText(ctx, call, res), { provider: ctx.name, model: call.model, serviceTier: request.service_tier });
    },

    // The upstream streams the client's own format: the core relays it in whole reads.
    async chatStreamEvents(request, call) {
      const res = await send(request, call, headers.stream);
      return { body: res.body, errorOf };
    },
  };

  if (images) {
    const imagesUrl = joinUrl(root, "/images/generations");
    const body = images.body ?? toOpenAIImageRequest;
    provider.imageOptions = images.options;
    provider.images = async (request, call) => {
      const res = await postUpstream(ctx, call, { url: imagesUrl, headers: callHeaders(headers.json, call), body: body(request, call.model), toError });
      return parseImagesText(await readUpstreamText(ctx, call, res), ctx.name);
    };
  }

  if (options.embeddings) {
    const embeddingsUrl = joinUrl(root, "/embeddings");
    provider.embeddings = async (request, call) => {
      const res = await postUpstream(ctx, call, { url: embeddingsUrl, headers: callHeaders(headers.json, call), body: toOpenAIEmbeddingsRequest(request, call.model), toError });
      return parseEmbeddingsText(await readUpstreamText(ctx, call, res), ctx.name, call.model);
    };
  }

  if (options.responses) {
    provider.responses = async (request, call) => {
      const base = request.stream ? headers.stream : headers.json;
      // A copy in every case: a call without a body sends no `content-type`.
      const sent = requestIdHeader ? withCallHeader(base, requestIdHeader, call.requestId) : { ...base };
      if (request.body === undefined) delete sent["content-type"];
      const res = await sendUpstream(ctx, call, { url: root + request.path, method: request.method, headers: sent, body: request.body, toError });
      return { status: res.status, contentType: headerValue(res.headers, "content-type") ?? "application/json", body: res.body };
    };
  }
  return provider;
}
