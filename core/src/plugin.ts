/**
 * The plugin contract (contract §10). A plugin is an ES module whose default export is made with
 * `defineProvider`, `defineStorage` or `defineRateLimiter`. The core validates the plugin's options
 * against its `optionsSchema` before the server starts, then calls `setup(options, ctx)` once.
 */
import type { ConsolaInstance } from "consola";
import type { Capabilities } from "./capabilities.ts";
import type { AbortHook, HttpBody, HttpClient } from "./http-client.ts";
import type { ImageGenerationRequest } from "./schemas/images-request.ts";
import type { ChatCompletion, ChatCompletionWithoutUsage, ChatMessage, ChatRequest, ChatStreamItem } from "./types/chat.ts";
import type { ImageOption, ImagesResponse } from "./types/images.ts";

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
  /** Aborts when the client goes away; pass it to `ctx.http.request` (or `abort`, when set). */
  signal: AbortSignal;
  /**
   * The same notice without an AbortController: the core's call objects carry it and make `signal`
   * only when a plugin reads it. `postUpstream`/`sendUpstream` pass it to `ctx.http.request` in place
   * of `signal` when it is set; a plugin calling `ctx.http.request` itself may do the same. A plugin
   * that replaces `signal` with its own (one that also fires on a sibling call's failure) must drop
   * `abort` too, or `postUpstream` listens to the hook and not to that signal:
   * `const { abort: _, ...rest } = call; postUpstream(ctx, { ...rest, signal }, request)`.
   */
  abort?: AbortHook;
  /** The provider's `timeout`, in ms; pass it to `ctx.http.request`. */
  timeoutMs: number;
  /** The router's request id, for logs and for upstreams that accept one. */
  requestId: string;
}

/**
 * A provider instance, returned by `setup`. It only translates: the core has already validated the
 * request, checked capabilities and limits, and it frames the reply.
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
   * A streamed chat completion. `request.stream` is true and `request.stream_options.include_usage`
   * is true: end with a usage chunk (`choices: []`) when the upstream reports usage; the core drops
   * it when the client did not ask for it. Errors thrown before the first item become an error
   * reply; errors thrown later become one SSE error event.
   */
  chatStream(request: ChatRequest, call: ProviderCall): Promise<AsyncIterable<ChatStreamItem>>;
  /**
   * Optional, and used by the core instead of `chatStream` when present: the same stream in
   * batches, each batch the items of one upstream read (never empty), which the core frames and
   * writes at once. For providers that read many items per read (an OpenAI-compatible SSE body
   * brings a dozen or more): one async step per read instead of one per item.
   */
  chatStreamBatches?(request: ChatRequest, call: ProviderCall): Promise<AsyncIterable<readonly ChatStreamItem[]>>;
  /**
   * Optional, and used by the core for streams before the two above: for an upstream that already
   * streams OpenAI's `chat.completion.chunk` events (the client's format), its reply body, which
   * the core relays in whole reads without parsing each chunk, changing only what the contract asks
   * (the usage chunk, `service_tier`, `[DONE]`). Throw for an error reply, as for `chatStream`.
   */
  chatStreamEvents?(request: ChatRequest, call: ProviderCall): Promise<ChatEventStream>;
  /**
   * Image generation, for models with the `images` capability. `request.model` is the bare id.
   * Return base64 (`b64_json`) or URLs as the upstream gives them: when the client asked for
   * `response_format: url` and gets base64, the core keeps the image and serves a URL itself.
   */
  images?(request: ImageGenerationRequest, call: ProviderCall): Promise<ImagesResponse>;
  /**
   * The optional image request fields a model accepts (contract §6 for images): a request that sets
   * any other one gets the core's 400 `unsupported_feature`. `n` means more than one image.
   * Without this method only `prompt`, `response_format` and `user` are accepted.
   */
  imageOptions?(model: string): readonly ImageOption[];
  /**
   * The responses API, forwarded one-to-one (contract §4): send `request` to the upstream as is
   * (only credentials added) and return a success reply with its body unread, or throw the mapped
   * `providerError` for an error reply. The core streams the body to the client unchanged.
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

/** The scopes a request is counted in (contract §3, `rate_limit`): who calls, and which provider serves it. */
export interface RateLimitSubject {
  app: string;
  developer: string;
  provider: string;
}

/**
 * The app a stored completion belongs to (README, "Stored chat completions"): the caller's
 * `Principal.app`, i.e. the API key's `app` (`"default"` for a key without one) or the app claim
 * of an identity-provider token. Stored completions of one owner are invisible to every other:
 * a storage keeps owners apart as if each had a store of its own.
 */
export type CompletionOwner = string;

/** One stored chat completion (contract §8): what `store: true` keeps once the reply is complete. */
export interface StoredCompletion {
  /** The app that stored it; only calls with this owner may read, list, update or delete it. */
  owner: CompletionOwner;
  /** The completion as the client received it (for a stream, assembled from its chunks); without `usage` when the upstream reported none. */
  completion: ChatCompletion | ChatCompletionWithoutUsage;
  /** The request's messages, in order, for the messages list. */
  messages: ChatMessage[];
  /**
   * The `provider/model` the request was routed to. The list's `model` filter matches it, and
   * also `completion.model` (the name the stored object shows, often the bare model id).
   */
  model: string;
  /** String pairs; replaced as a whole by an update. Any string is a key: `""`, `__proto__`, `a\nb`. */
  metadata: Record<string, string>;
  /** Unix milliseconds when it was stored; lists are ordered by it, then by storing order. */
  createdAt: number;
}

/** A page request: `after` is the id of the last item of the previous page. */
export interface CompletionListQuery {
  /** Only this owner's completions; `after` names one of them or is unknown. */
  owner: CompletionOwner;
  after?: string;
  /** 1 to 100. */
  limit: number;
  order: "asc" | "desc";
  /** Only completions whose `model` (`provider/model`) or `completion.model` is this. */
  model?: string;
  /**
   * Only completions whose metadata has every one of these pairs. The core hands a null-prototype
   * object, so a key may be `__proto__` or `constructor`: read it with `Object.entries` or
   * `Object.hasOwn`, never with `in` or a plain `metadata[key]` lookup on a record's own metadata.
   */
  metadata?: Record<string, string>;
}

export interface CompletionPage {
  data: StoredCompletion[];
  /** True when more items match after the last one of `data`. */
  hasMore: boolean;
}

/**
 * A storage backend for stored chat completions (contract §8). Ids are the completions' own
 * (`completion.id`). Deleted and expired completions behave as never stored: `undefined`/`false`,
 * and absent from lists.
 *
 * Every call names the owner (the caller's app, `CompletionOwner`), and a storage keeps owners
 * apart: a completion is found only under the owner it was saved with, so the same id saved by two
 * owners is two completions, and one owner's list never shows, nor counts, another's. Another
 * owner's id behaves exactly like an id never stored. Keep owners apart in the key layout (not by
 * filtering a shared list), so a list stays a walk of one owner's index. The owner comes first in
 * every call, so an older plugin that takes it for the id finds nothing rather than everything.
 * Returned completions carry the `owner` they were saved with (`default` for data from before
 * owners); the core treats one of another owner as not found. The conformance kit `testStorage`
 * of `@modelmux/core/testing` checks all of this.
 *
 * The core bounds every call by `storage.timeout` and answers `storage_error` when one rejects or
 * takes longer; a plugin should still give its own network calls a timeout shorter than that.
 */
export interface Storage {
  /** Stores one completion under `entry.owner` in a single step: a reader never sees it half-written. */
  saveCompletion(entry: StoredCompletion): Promise<void>;
  /** The completion `id` of `owner`; `undefined` when `owner` stored none under that id. */
  getCompletion(owner: CompletionOwner, id: string): Promise<StoredCompletion | undefined>;
  /**
   * One page of `query.owner`'s completions in `createdAt` order. Listing a page must not read
   * every stored item (an index, not a scan). Returns `undefined` when `after` names no
   * completion of this owner.
   */
  listCompletions(query: CompletionListQuery): Promise<CompletionPage | undefined>;
  /** Replaces the metadata; `undefined` when `owner` has no such completion. */
  updateMetadata(owner: CompletionOwner, id: string, metadata: Record<string, string>): Promise<StoredCompletion | undefined>;
  /** `false` when `owner` had no such completion. */
  deleteCompletion(owner: CompletionOwner, id: string): Promise<boolean>;
  /**
   * Optional: keeps a generated image served by URL (contract §9) until `image.expiresAt`; `key`
   * is a digest of the URL's secret token. Images have no owner: the URL's token is the credential.
   * Without these two methods the core keeps images in its own memory, which a second router
   * instance cannot see.
   */
  saveImage?(key: string, image: StoredImage): Promise<void>;
  /** The image saved under `key`, or `undefined` once it expired or when there is none. */
  getImage?(key: string): Promise<StoredImage | undefined>;
  /** Writes out what is pending; called on a graceful stop. */
  close?(): Promise<void> | void;
}

/** A generated image kept for its URL. */
export interface StoredImage {
  contentType: string;
  data: Buffer;
  /** Unix milliseconds after which the image is gone. */
  expiresAt: number;
}

/** What a storage plugin receives besides its options. */
export interface StorageContext extends PluginContext {
  /** `storage.ttl` in ms: completions older than this must be gone. Undefined: kept forever. */
  ttlMs: number | undefined;
}

export interface StorageDefinition<Options = Record<string, unknown>> {
  kind: "storage";
  name: string;
  optionsSchema: JsonSchema;
  setup(options: Options, ctx: StorageContext): Storage | Promise<Storage>;
}

/**
 * One limit a request is counted against: a counter and its budget per sliding window. The core
 * builds the rules from the config (`rate_limit.app`, `rate_limit.developer`,
 * `providers.<name>.rate_limit`) and the caller's scope; a limiter only counts, so it never needs
 * to know what an app or a provider is.
 */
export interface RateLimitRule {
  /** The counter's name, unique per scope and value: `app:my-app`, `developer:alice`, `provider:openai`. */
  key: string;
  /** Requests allowed in any window of `windowMs`. */
  requests: number;
  /** Tokens allowed in any window of `windowMs`; absent when only requests are limited. */
  tokens?: number;
  /** The window's length, in ms (more than 0). */
  windowMs: number;
}

/** A rule's counters right after a decision, for the `x-ratelimit-*` headers. */
export interface RateLimitRuleState {
  /** Requests still allowed in the window (after this one, when it was counted). */
  remainingRequests: number;
  /** Ms until the oldest request counted in the window leaves it (0 when none is counted). */
  resetRequestsMs: number;
  /** Only for a rule with `tokens`: tokens still allowed, the reservation of this request deducted. */
  remainingTokens?: number;
  /** Only for a rule with `tokens`: ms until the oldest tokens counted in the window leave it. */
  resetTokensMs?: number;
  /** Ms until this rule would admit the request; 0 when it admits it now. */
  retryAfterMs: number;
}

/** One rate-limit decision for a request, taken before the upstream call. */
export interface RateLimitDecision {
  /** True when every rule admitted the request: it was then counted in every rule; otherwise in none. */
  allowed: boolean;
  /** One state per rule, in the order of the request's `rules`; empty when `unavailable`. */
  states: RateLimitRuleState[];
  /** Ms until the request would be admitted (the largest of the refusing rules'); 0 when allowed. */
  retryAfterMs: number;
  /**
   * Set when the limiter could not reach its store and decided by its failure policy
   * (fail-open: allowed; fail-closed: refused). Nothing was counted.
   */
  unavailable?: boolean;
}

/** What `acquire` counts: one request, and `reservedTokens` in every rule that limits tokens. */
export interface RateLimitAcquire {
  /** Names this request's reservation for `settle`; unique across every router sharing the limiter. */
  id: string;
  rules: readonly RateLimitRule[];
  /** Tokens held in every rule with a `tokens` budget until `settle` (0: none). */
  reservedTokens: number;
}

/** What `settle` reconciles: the same `id`, `rules` and `reservedTokens` as the `acquire`. */
export interface RateLimitSettle extends RateLimitAcquire {
  /** The tokens the reply really used; 0 when none or unknown (a failed or aborted call). */
  usedTokens: number;
}

/**
 * A rate-limit backend (contract §3, `rate_limit.plugin`). Every limiter keeps the same rules, so
 * the two built-in ones behave alike and a test of one describes the other:
 * - a sliding window per rule: at most `requests` requests, and `tokens` tokens, in any `windowMs`;
 * - a request is admitted when every rule has room for one more request, and for its reservation on
 *   top of the tokens counted (with nothing reserved, while fewer than `tokens` are counted);
 * - admission is all-or-nothing and atomic: concurrent calls never both take the last unit;
 * - tokens reserved at `acquire` count from then until `settle`, which removes them and counts the
 *   used tokens from the time of `settle` (the usage is known only once the reply is complete).
 * The conformance kit `testRateLimiter` of `@modelmux/core/testing` checks these rules.
 */
export interface RateLimiter {
  /** Decides, and when every rule admits the request, counts it, in one atomic step. */
  acquire(request: RateLimitAcquire): Promise<RateLimitDecision>;
  /** Replaces the reservation of an admitted request with the tokens it used. Never rejects. */
  settle(request: RateLimitSettle): Promise<void>;
  close?(): Promise<void> | void;
}

export interface RateLimiterDefinition<Options = Record<string, unknown>> {
  kind: "ratelimit";
  name: string;
  optionsSchema: JsonSchema;
  setup(options: Options, ctx: PluginContext): RateLimiter | Promise<RateLimiter>;
}

export type PluginDefinition = ProviderDefinition<never> | StorageDefinition<never> | RateLimiterDefinition<never>;

/**
 * Defines a provider plugin.
 * @example
 * export default defineProvider<{ base_url: string }>({
 *   name: "acme",
 *   optionsSchema: { type: "object", properties: { base_url: { type: "string" } }, required: ["base_url"] },
 *   setup(options, ctx) { return { capabilities: () => ({ tools: true }), chat, chatStream }; },
 * });
 */
export function defineProvider<Options>(definition: Omit<ProviderDefinition<Options>, "kind">): ProviderDefinition<Options> {
  return { kind: "provider", ...definition };
}

/** Defines a storage plugin for stored chat completions. */
export function defineStorage<Options>(definition: Omit<StorageDefinition<Options>, "kind">): StorageDefinition<Options> {
  return { kind: "storage", ...definition };
}

/** Defines a rate-limit plugin. */
export function defineRateLimiter<Options>(definition: Omit<RateLimiterDefinition<Options>, "kind">): RateLimiterDefinition<Options> {
  return { kind: "ratelimit", ...definition };
}
