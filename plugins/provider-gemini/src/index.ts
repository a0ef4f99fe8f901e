/**
 * @modelmux/provider-gemini: the Google Gemini API (`generateContent`,
 * `streamGenerateContent?alt=sse`, and Imagen's `predict`). Transport only: the translation lives
 * in `request.ts` (with `contents.ts`), `response.ts`, `stream.ts`, `image-request.ts`,
 * `image-response.ts` and `errors.ts`.
 */
import {
  choiceCount,
  defineProvider,
  parseUpstreamJson,
  postUpstream,
  readUpstreamText,
  type ChatRequest,
  type HttpResponse,
  type ImageGenerationRequest,
  type JsonSchema,
  type PluginContext,
  type Provider,
  type ProviderCall,
} from "@modelmux/core";
import { geminiCapabilities } from "./capabilities.ts";
import { toProviderError } from "./errors.ts";
import { geminiImageOptions, imageCount, imageFamily, toGeminiImageRequest, toImagenRequest } from "./image-request.ts";
import { readGeminiImages, readImagenImages, toImagesResponse } from "./image-response.ts";
import { toGeminiRequest } from "./request.ts";
import { parseCompletionText } from "./response.ts";
import { readGeminiStreamBatches } from "./stream.ts";
import type { GeminiSafetySetting } from "./wire.ts";

/** The keys of a `providers.<name>` block that this plugin reads (README, "Options"). */
export interface GeminiProviderOptions {
  /**
   * The API host, as the official SDK takes it: requests go to
   * `${base_url}/${api_version}/models/${model}:generateContent`. Default
   * `https://generativelanguage.googleapis.com`. A trailing slash is ignored.
   */
  base_url?: string;
  /** Sent as `x-goog-api-key` (never in the URL, where it would end up in logs). */
  api_key?: string;
  /** The API version in the path. Default `v1beta`, which has every feature this plugin uses. */
  api_version?: string;
  /** Extra headers for every upstream request; they win over the built-in ones. */
  headers?: Record<string, string>;
  /** Sent as `safetySettings` with every request, e.g. `[{ category: HARM_CATEGORY_HARASSMENT, threshold: BLOCK_NONE }]`. */
  safety_settings?: GeminiSafetySetting[];
}

export const DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com";
export const DEFAULT_API_VERSION = "v1beta";

/** Validated by the core with Ajv before the server starts; typos in a key are an error. */
export const optionsSchema: JsonSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    base_url: { type: "string", format: "http-url", default: DEFAULT_BASE_URL, description: "API host, e.g. https://generativelanguage.googleapis.com" },
    api_key: { type: "string" },
    api_version: { type: "string", pattern: "^v[0-9]+[a-z0-9]*$", default: DEFAULT_API_VERSION },
    headers: { type: "object", additionalProperties: { type: "string" } },
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
};

/** The model methods this plugin calls: chat and Gemini images, streamed chat, Imagen images. */
export type ModelMethod = "generateContent" | "streamGenerateContent" | "predict";

/**
 * The endpoint of a model. A bare id is a base model (`models/<id>`); an id with a slash is a
 * full resource name, so tuned models (`tunedModels/my-model`) work too. Streams ask for SSE.
 * @example
 * modelUrl({ base_url: "https://generativelanguage.googleapis.com/" }, "gemini-2.5-flash", "streamGenerateContent")
 * // "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
 */
export function modelUrl(options: Pick<GeminiProviderOptions, "base_url" | "api_version">, model: string, method: ModelMethod): string {
  const base = (options.base_url ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
  const name = model.includes("/") ? model : `models/${model}`;
  const path = name.split("/").map(encodeURIComponent).join("/");
  const query = method === "streamGenerateContent" ? "?alt=sse" : "";
  return `${base}/${options.api_version ?? DEFAULT_API_VERSION}/${path}:${method}${query}`;
}

/**
 * The headers every request carries. Names are lower-cased and the `headers` option comes last,
 * so an entry there overrides a built-in header whatever its case.
 */
export function buildHeaders(options: GeminiProviderOptions, accept: string): Record<string, string> {
  const headers: Record<string, string> = { "content-type": "application/json", accept };
  if (options.api_key) headers["x-goog-api-key"] = options.api_key;
  for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
  return headers;
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
  const secret = options.api_key || undefined;
  const jsonHeaders = buildHeaders(options, "application/json");
  const streamHeaders = buildHeaders(options, "text/event-stream");

  /** Sends the request; any reply that is not a success is thrown as the mapped error. */
  function send(request: ChatRequest, call: ProviderCall, stream: boolean): Promise<HttpResponse> {
    return postUpstream(ctx, call, {
      url: modelUrl(options, call.model, stream ? "streamGenerateContent" : "generateContent"),
      headers: stream ? streamHeaders : jsonHeaders,
      body: toGeminiRequest(request, { model: call.model, safetySettings: options.safety_settings }),
      toError: (reply) => toProviderError(ctx.name, reply, secret),
    });
  }

  /** One JSON call of a model method, its 200 reply parsed; error replies thrown as mapped. */
  async function callJson(method: ModelMethod, body: unknown, call: ProviderCall): Promise<unknown> {
    const res = await postUpstream(ctx, call, {
      url: modelUrl(options, call.model, method),
      headers: jsonHeaders,
      body,
      toError: (reply) => toProviderError(ctx.name, reply, secret),
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
  };
}

/**
 * The provider plugin. In the config:
 * @example
 * providers:
 *   gemini: { plugin: provider-gemini, api_key: ${GEMINI_API_KEY}, models: [gemini-2.5-flash] }
 */
export default defineProvider<GeminiProviderOptions>({ name: "gemini", optionsSchema, setup });
