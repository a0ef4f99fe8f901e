/**
 * The plugin contract (docs/plugins.md). A plugin is an ES module whose default export is made with
 * `defineProvider`, `defineStorage` or `defineRateLimiter`. The core validates the plugin's options
 * against its `optionsSchema` before the server starts, then calls `setup(options, ctx)` once.
 * A storage plugin also states the version of the storage contract it implements (`contract: 2`,
 * the contract with owners); one without it, written before owners, is refused when it loads.
 *
 * This file holds what every plugin shares and the provider's side; the storage's side is in
 * `plugins/storage-contract.ts`, the rate limiter's in `plugins/rate-limit-contract.ts`, both
 * re-exported here, so one import of this file (or of `@modelmux/core`) names all of it.
 */
import type { ConsolaInstance } from "consola";
import type { Capabilities } from "./capabilities.ts";
import type { HttpBody, HttpClient } from "./upstream/client.ts";
import type { RateLimiterDefinition } from "./plugins/rate-limit-contract.ts";
import type { StorageDefinition } from "./plugins/storage-contract.ts";
import type { EmbeddingsRequest } from "./schemas/embeddings-request.ts";
import type { ImageGenerationRequest } from "./schemas/images-request.ts";
import type { ChatCompletion, ChatCompletionWithoutUsage, ChatRequest, ChatStreamItem } from "./types/chat.ts";
import type { EmbeddingsResponse } from "./types/embeddings.ts";
import type { ImageOption, ImagesResponse } from "./types/images.ts";
import type { FromSchema } from "./plugins/options-type.ts";

export type { FromSchema } from "./plugins/options-type.ts";

export {
  defineStorage,
  type CompletionListQuery,
  type CompletionOwner,
  type CompletionPage,
  type Storage,
  type StorageContext,
  type StorageDefinition,
  type StoredCompletion,
  type StoredImage,
  type UsageCounts,
  type UsageDelta,
  type UsageRange,
  type UsageRow,
} from "./plugins/storage-contract.ts";
export {
  costUnits,
  COST_UNITS_PER_USD,
  defineRateLimiter,
  type RateLimitAcquire,
  type RateLimitDecision,
  type RateLimiter,
  type RateLimiterDefinition,
  type RateLimitRule,
  type RateLimitRuleState,
  type RateLimitSettle,
  type RateLimitSubject,
} from "./plugins/rate-limit-contract.ts";

/** A JSON Schema object, as Ajv takes it. */
export type JsonSchema = { [keyword: string]: unknown };

/** What every plugin receives besides its options. */
export interface PluginContext {
  /** The name this plugin instance has in the config, e.g. `groq` for `providers.groq`. */
  name: string;
  /** A consola logger tagged with the plugin's kind and name. */
  logger: ConsolaInstance;
  /** The core's keep-alive HTTP client. Tests may hand in any object with the same shape. */
  http: HttpClient;
}

/** The per-call facts a provider needs besides the request body. */
export interface ProviderCall {
  /** The bare upstream model id (`gpt-4o-mini` for `openai/gpt-4o-mini`). */
  model: string;
  /**
   * The call's one abort notice: it aborts when the client goes away, or when the core stops
   * reading a stream it no longer needs (its answer is whole and the upstream holds its connection
   * open). `postUpstream`/`sendUpstream` listen to it for you; a plugin that calls
   * `ctx.http.request` itself passes it on. The core makes it only when it is read (an
   * `AbortController` per request costs), and its helpers listen to the same notice without making
   * it. To give upstream calls a signal of its own (one that also fires when a sibling call fails),
   * a plugin passes a copy with that signal: `postUpstream(ctx, { ...call, signal }, request)`.
   */
  signal: AbortSignal;
  /** The provider's `timeout`, in ms; pass it to `ctx.http.request`. */
  timeoutMs: number;
  /** The router's request id, for logs and for upstreams that accept one. */
  requestId: string;
  /**
   * True when the request's final assistant message is an answer the client already has in part:
   * the provider must continue that text, not answer anew (the `prefill` capability; docs/plugins.md,
   * "Stream continuation"). A plugin whose upstream wants such a message marked marks it now.
   */
  continuation?: boolean;
}

/**
 * A provider instance, returned by `setup`. It only translates: the core has already validated the
 * request, checked capabilities and limits, and it frames the reply. It streams one way: chunks the
 * core frames (`chatStream`), or an OpenAI-format body the core relays (`chatStreamEvents`).
 */
export interface Provider {
  /**
   * The capability defaults for one of this provider's bare model ids. The core layers the
   * config's overrides on top, once, at start-up.
   */
  capabilities(model: string): Partial<Capabilities>;
  /**
   * A non-streamed chat completion. `request.model` is already the bare model id; `request.stream`
   * is false. Throw `providerError(...)` for an upstream error reply. Without the upstream's usage,
   * return the completion without `usage` (`ChatCompletionWithoutUsage`) rather than make one up.
   */
  chat(request: ChatRequest, call: ProviderCall): Promise<ChatCompletion | ChatCompletionWithoutUsage>;
  /**
   * A streamed chat completion, which the core frames as SSE (`chat/stream-frames.ts`): every
   * provider has this or `chatStreamEvents`, and the core refuses one with neither when it loads.
   * `request.stream` is true and `request.stream_options.include_usage` is true: end with a usage
   * chunk (`choices: []`) when the upstream reports usage; the core drops it when the client did
   * not ask for it. Errors thrown before the first item become an error reply; errors thrown later
   * become one SSE error event.
   *
   * Yield items one at a time, or a batch per upstream read (an array, never empty: the items
   * `readSseEventBatches` gives one read), which the core frames and writes at once: one async
   * step per read instead of one per item, for upstreams that send many events per read.
   *
   * An item is a chunk object, which the core checks and serialises; a chunk's JSON text in
   * OpenAI's format (an OpenAI-compatible upstream's `data:`), which it parses for the checks and
   * sends as it is; or a chunk object with its exact JSON text (`withRawJson(chunk, text)`), which
   * it checks as an object and sends as the text, neither parsed nor serialised: the fastest form
   * for a chunk the plugin builds as text itself.
   */
  chatStream?(request: ChatRequest, call: ProviderCall): Promise<AsyncIterable<ChatStreamItem | readonly ChatStreamItem[]>>;
  /**
   * In place of `chatStream`, for an upstream that already streams OpenAI's `chat.completion.chunk`
   * events (the client's format): its reply body, which the core relays in whole reads
   * (`chat/event-relay.ts`) without serialising each chunk again, changing only what the contract
   * asks (the usage chunk, `service_tier`, `[DONE]`). The core calls it for every stream of a
   * provider that has it, never `chatStream`. Throw for an error reply, as for `chatStream`.
   */
  chatStreamEvents?(request: ChatRequest, call: ProviderCall): Promise<ChatEventStream>;
  /**
   * Image generation, for models with the `images` capability. `request.model` is the bare id.
   * Return base64 (`b64_json`) or URLs as the upstream gives them: when the client asked for
   * `response_format: url` and gets base64, the core keeps the image and serves a URL itself.
   */
  images?(request: ImageGenerationRequest, call: ProviderCall): Promise<ImagesResponse>;
  /**
   * The optional image request fields a model accepts: a request that sets any other one gets the
   * core's 400 `unsupported_feature` (docs/interface.md, "Models and capabilities"). `n` means more
   * than one image. Without this method only `prompt`, `response_format` and `user` are accepted.
   */
  imageOptions?(model: string): readonly ImageOption[];
  /**
   * Embeddings, for models with the `embeddings` capability (docs/plugins.md, "Embeddings").
   * `request.model` is the bare id; `request.input` is valid and not empty. Return one vector per
   * input, in order: numbers, or base64 when the upstream gives that for `encoding_format: base64`;
   * the core checks them and hands the client the form it asked for. Pass `dimensions` on to the
   * upstream, or throw a 400 when the model cannot shorten its vectors: a vector of another length
   * is a 502. Without the upstream's usage, leave `usage` out rather than make one up.
   */
  embeddings?(request: EmbeddingsRequest, call: ProviderCall): Promise<EmbeddingsResponse>;
  /**
   * The responses API, forwarded one-to-one (docs/interface.md, "Responses API"): send `request` to
   * the upstream as is (only credentials added) and return a success reply with its body unread, or
   * throw the mapped `providerError` for an error reply. The core streams the body to the client
   * unchanged.
   */
  responses?(request: ForwardRequest, call: ForwardCall): Promise<ForwardReply>;
  /** Releases what `setup` acquired. */
  close?(): Promise<void> | void;
}

/** What `chatStreamEvents` returns: an OpenAI-format event stream, and how to read its errors. */
export interface ChatEventStream {
  /** The upstream's SSE body (status 200). */
  body: HttpBody;
  /**
   * The error an event reports, or `undefined` for an ordinary chunk: OpenAI's `{"error": {…}}`,
   * vLLM's `{"object": "error"}`, an `event: error`. Called only for events that may be errors
   * (named `error`, or whose data is not a chunk, or a chunk with an `error` key), so it may parse
   * the data. The core sends the chunks before it, then the error (mapped like any provider error)
   * as the stream's error event; an event that is not a chunk and reports no error is a 502.
   */
  errorOf(event: string | undefined, data: string): unknown;
}

/** One call of the responses API, as the client made it (model name already bare). */
export interface ForwardRequest {
  method: "GET" | "POST" | "DELETE";
  /** Below the API root, with the client's query string: `/responses`, `/responses/resp_1/input_items?limit=5`. */
  path: string;
  /** The JSON body to send, already serialised; undefined for a call without a body. */
  body?: string;
  /** True when the client expects Server-Sent Events (`stream: true`, or `?stream=true` on a GET). */
  stream: boolean;
}

/** `ProviderCall` without a model: a forwarded GET or DELETE names a response, not a model. */
export type ForwardCall = Omit<ProviderCall, "model">;

/** A forwarded success reply (status < 300); the core reads and relays `body`. */
export interface ForwardReply {
  status: number;
  /** The upstream's content type: `text/event-stream` replies are relayed as a stream. */
  contentType: string;
  body: HttpBody;
}

export interface ProviderDefinition<Options = Record<string, unknown>> {
  kind: "provider";
  /** The plugin's name, used in logs and errors (`[modelmux] [provider:openai] …`). */
  name: string;
  /**
   * JSON Schema for the plugin's own keys of a `providers.<name>` block (`base_url`, `api_key`…).
   * The core's keys (`plugin`, `models`, `capabilities`, `rate_limit`, `timeout`, `requires_env`)
   * are removed before validation, so `additionalProperties: false` catches typos. Besides
   * ajv-formats' formats, `format: "http-url"` checks an absolute http(s) URL; `default`s are applied.
   */
  optionsSchema: JsonSchema;
  setup(options: Options, ctx: PluginContext): Provider | Promise<Provider>;
}

export type PluginDefinition = ProviderDefinition<never> | StorageDefinition<never> | RateLimiterDefinition<never>;

/** The options type of a definition: the explicit type argument, else read from the schema. */
type OptionsOf<Explicit, Schema> = [Explicit] extends [never] ? FromSchema<Schema> : Explicit;

/**
 * Defines a provider plugin. `setup`'s options are typed from `optionsSchema` (`FromSchema`,
 * `plugins/options-type.ts`) when the schema is a literal: inline, or a constant declared `as
 * const`. A plugin that names its options type instead (`defineProvider<MyOptions>(…)`) keeps it.
 * @example
 * export default defineProvider({
 *   name: "acme",
 *   optionsSchema: { type: "object", properties: { base_url: { type: "string" } }, required: ["base_url"] },
 *   setup(options, ctx) { // options: { base_url: string }
 *     return { capabilities: () => ({ tools: true }), chat, chatStream };
 *   },
 * });
 */
export function defineProvider<Explicit = never, const Schema extends JsonSchema = JsonSchema>(definition: {
  name: string;
  optionsSchema: Schema;
  setup(options: NoInfer<OptionsOf<Explicit, Schema>>, ctx: PluginContext): Provider | Promise<Provider>;
}): ProviderDefinition<OptionsOf<Explicit, Schema>> {
  return { kind: "provider", ...definition };
}
