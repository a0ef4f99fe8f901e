/**
 * @modelmux/provider-gemini: the Google Gemini API (`generateContent`,
 * `streamGenerateContent?alt=sse`, Imagen's `predict`, `embedContent` and `batchEmbedContents`).
 * Transport only: the translation lives in `request.ts` (with `contents.ts`), `response.ts`,
 * `stream.ts`, `image-request.ts`, `image-response.ts`, `embeddings.ts` and `errors.ts`; the API root, headers and error replies are the core's
 * provider kit's (docs/plugins.md, "The provider kit").
 */
import {
  apiRoot,
  choiceCount,
  defineProvider,
  joinUrl,
  upstreamHeaders,
  type FromSchema,
  parseUpstreamJson,
  postUpstream,
  readUpstreamText,
  type ChatRequest,
  type EmbeddingsRequest,
  type HttpResponse,
  type ImageGenerationRequest,
  type PluginContext,
  type Provider,
  type ProviderCall,
} from "@modelmux/core";
import { geminiCapabilities } from "./capabilities.ts";
import { EMBED_BATCH_LIMIT, embeddingTexts, readBatchEmbedContents, readEmbedContent, toEmbeddingsResponse, toEmbedRequest, type GeminiEmbedding } from "./embeddings.ts";
import { geminiErrors } from "./errors.ts";
import { geminiImageOptions, imageCount, imageFamily, toGeminiImageRequest, toImagenRequest } from "./image-request.ts";
import { readGeminiImages, readImagenImages, toImagesResponse } from "./image-response.ts";
import { toGeminiRequest } from "./request.ts";
import { parseCompletionText } from "./response.ts";
import { readGeminiStreamBatches } from "./stream.ts";

export const DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com";
export const DEFAULT_API_VERSION = "v1beta";

/**
 * The keys of a `providers.<name>` block that this plugin reads (README, "Options"), validated by
 * the core with Ajv before the server starts; typos in a key are an error.
 */
export const optionsSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    // The API host, as the official SDK takes it: requests go to
    // `${base_url}/${api_version}/models/${model}:generateContent`.
    base_url: { type: "string", format: "http-url", default: DEFAULT_BASE_URL, description: "API host, e.g. https://generativelanguage.googleapis.com" },
    // Sent as `x-goog-api-key` (never in the URL, where it would end up in logs).
    api_key: { type: "string" },
    // The API version in the path; `v1beta` has every feature this plugin uses.
    api_version: { type: "string", pattern: "^v[0-9]+[a-z0-9]*$", default: DEFAULT_API_VERSION },
    // Extra headers for every upstream request; they win over the built-in ones.
    headers: { type: "object", additionalProperties: { type: "string" } },
    // Sent as `safetySettings` with every request, e.g. `[{ category: HARM_CATEGORY_HARASSMENT, threshold: BLOCK_NONE }]`.
    safety_settings: {
      type: "array",
      items: {
        type: "object",
        required: ["category", "threshold"],
        additionalProperties: false,
        properties: { category: { type: "string" }, threshold: { type: "string" } },
      },
    },
  },
} as const;

export type GeminiProviderOptions = FromSchema<typeof optionsSchema>;

/** The model methods this plugin calls: chat and Gemini images, streamed chat, Imagen images, embeddings. */
export type ModelMethod = "generateContent" | "streamGenerateContent" | "predict" | "embedContent" | "batchEmbedContents";

/**
 * The endpoint of a model below `root` (`apiRoot` of `base_url`). A bare id is a base model
 * (`models/<id>`); an id with a slash is a full resource name, so tuned models
 * (`tunedModels/my-model`) work too. Streams ask for SSE.
 * @example
 * modelUrl("https://generativelanguage.googleapis.com", "v1beta", "gemini-2.5-flash", "streamGenerateContent")
 * // "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
 */
export function modelUrl(root: string, apiVersion: string, model: string, method: ModelMethod): string {
  const path = resourceName(model).split("/").map(encodeURIComponent).join("/");
  const query = method === "streamGenerateContent" ? "?alt=sse" : "";
  return joinUrl(root, `/${apiVersion}/${path}:${method}${query}`);
}

/** A model's resource name: `models/<id>` for a base model, the id itself for a full name (`tunedModels/…`). */
export function resourceName(model: string): string {
  return model.includes("/") ? model : `models/${model}`;
}

/**
 * Runs `task` `count` times at once, each with a signal that fires when the call's does or when
 * another run fails: one failure fails them all, and the runs still out are abandoned, not paid for.
 */
async function inParallel<T>(count: number, signal: AbortSignal, task: (signal: AbortSignal) => Promise<T>): Promise<T[]> {
  if (count === 1) return [await task(signal)];
  const failed = new AbortController();
  const shared = AbortSignal.any([signal, failed.signal]);
  const run = () =>
    task(shared).catch((error: unknown) => {
      failed.abort();
      throw error;
    });
  return Promise.all(Array.from({ length: count }, run));
}

function setup(options: GeminiProviderOptions, ctx: PluginContext): Provider {
  const root = apiRoot(options.base_url, DEFAULT_BASE_URL);
  const apiVersion = options.api_version ?? DEFAULT_API_VERSION;
  const secret = options.api_key || undefined;
  const headers = upstreamHeaders({ apiKey: options.api_key, auth: "x-goog-api-key", extra: options.headers });
  const { fromReply: toError } = geminiErrors(ctx.name, headers.secrets);

  /** Sends the request; any reply that is not a success is thrown as the mapped error. */
  function send(request: ChatRequest, call: ProviderCall, stream: boolean): Promise<HttpResponse> {
    return postUpstream(ctx, call, {
      url: modelUrl(root, apiVersion, call.model, stream ? "streamGenerateContent" : "generateContent"),
      headers: stream ? headers.stream : headers.json,
      body: toGeminiRequest(request, { model: call.model, safetySettings: options.safety_settings }),
      toError,
    });
  }

  /** One JSON call of a model method, its 200 reply parsed; error replies thrown as mapped. */
  async function callJson(method: ModelMethod, body: unknown, call: ProviderCall): Promise<unknown> {
    const res = await postUpstream(ctx, call, {
      url: modelUrl(root, apiVersion, call.model, method),
      headers: headers.json,
      body,
      toError,
    });
    return parseUpstreamJson(await readUpstreamText(ctx, call, res), ctx.name);
  }

  /**
   * Imagen makes `n` images in one `:predict`. Gemini image models refuse `candidateCount` above
   * 1, so `n` images are `n` parallel `generateContent` calls of one image each.
   */
  async function generateImages(request: ImageGenerationRequest, call: ProviderCall) {
    const target = { provider: ctx.name, model: call.model };
    if (imageFamily(call.model) === "imagen") {
      const reply = await callJson("predict", toImagenRequest(request, target), call);
      return toImagesResponse([readImagenImages(reply, ctx.name)], ctx.name);
    }
    const body = toGeminiImageRequest(request, { ...target, safetySettings: options.safety_settings });
    // A copy with its own signal: `postUpstream` listens to that, not to the call's.
    const replies = await inParallel(imageCount(request), call.signal, (signal) => callJson("generateContent", body, { ...call, signal }));
    return toImagesResponse(
      replies.map((reply) => readGeminiImages(reply, ctx.name)),
      ctx.name,
    );
  }

  /**
   * One text: `embedContent`. Several: `batchEmbedContents`, at most 100 a call (Google's bound),
   * the calls one after the other so that one request never makes a burst against the key's quota.
   */
  async function embed(request: EmbeddingsRequest, call: ProviderCall) {
    const texts = embeddingTexts(request, ctx.name);
    if (texts.length === 1) {
      const reply = await callJson("embedContent", toEmbedRequest(texts[0]!, request.dimensions), call);
      return toEmbeddingsResponse([readEmbedContent(reply, ctx.name)], call.model);
    }
    const name = resourceName(call.model);
    const embeddings: GeminiEmbedding[] = [];
    for (let start = 0; start < texts.length; start += EMBED_BATCH_LIMIT) {
      const batch = texts.slice(start, start + EMBED_BATCH_LIMIT);
      const reply = await callJson("batchEmbedContents", { requests: batch.map((text) => toEmbedRequest(text, request.dimensions, name)) }, call);
      embeddings.push(...readBatchEmbedContents(reply, ctx.name, batch.length));
    }
    return toEmbeddingsResponse(embeddings, call.model);
  }

  return {
    capabilities: geminiCapabilities,

    async chat(request: ChatRequest, call: ProviderCall) {
      const res = await send(request, call, false);
      return parseCompletionText(await readUpstreamText(ctx, call, res), { provider: ctx.name, model: call.model, choices: choiceCount(request) });
    },

    // One batch of chunks per upstream read: the core takes one async step per read, not per event.
    async chatStream(request: ChatRequest, call: ProviderCall) {
      const res = await send(request, call, true);
      return readGeminiStreamBatches(res.body, { provider: ctx.name, model: call.model, choices: choiceCount(request), timeoutMs: call.timeoutMs, secret });
    },

    imageOptions: geminiImageOptions,
    images: generateImages,
    embeddings: embed,
  };
}

/**
 * The provider plugin. In the config:
 * @example
 * providers:
 *   gemini: { plugin: provider-gemini, api_key: ${GEMINI_API_KEY}, models: [gemini-2.5-flash] }
 */
export default defineProvider({ name: "gemini", optionsSchema, setup });
