/**
 * The plugin contract (contract §10). A plugin is an ES module whose default export is made with
 * `defineProvider`, `defineStorage` or `defineRateLimiter`. The core validates the plugin's options
 * against its `optionsSchema` before the server starts, then calls `setup(options, ctx)` once.
 */
import type { ConsolaInstance } from "consola";
import type { Capabilities } from "./capabilities.ts";
import type { HttpClient } from "./http-client.ts";
import type { ChatCompletion, ChatMessage, ChatRequest, ChatStreamItem, Usage } from "./types/chat.ts";

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
  /** Aborts when the client goes away; pass it to `ctx.http.request`. */
  signal: AbortSignal;
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
   * is false. Throw `providerError(...)` for an upstream error reply.
   */
  chat(request: ChatRequest, call: ProviderCall): Promise<ChatCompletion>;
  /**
   * A streamed chat completion. `request.stream` is true and `request.stream_options.include_usage`
   * is true: end with a usage chunk (`choices: []`) when the upstream reports usage; the core drops
   * it when the client did not ask for it. Errors thrown before the first item become an error
   * reply; errors thrown later become one SSE error event.
   */
  chatStream(request: ChatRequest, call: ProviderCall): Promise<AsyncIterable<ChatStreamItem>>;
  /** Releases what `setup` acquired. */
  close?(): Promise<void> | void;
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

/** The scopes a request is counted in (contract §3, `rate_limit`). */
export interface RateLimitSubject {
  app: string;
  developer: string;
  provider: string;
}

/** One stored chat completion (contract §8): what `store: true` keeps once the reply is complete. */
export interface StoredCompletion {
  /** The completion as the client received it (for a stream, assembled from its chunks). */
  completion: ChatCompletion;
  /** The request's messages, in order, for the messages list. */
  messages: ChatMessage[];
  /** The `provider/model` the request was routed to; the list's `model` filter matches it. */
  model: string;
  /** String pairs; replaced as a whole by an update. */
  metadata: Record<string, string>;
  /** Unix milliseconds when it was stored; lists are ordered by it, then by storing order. */
  createdAt: number;
}

/** A page request: `after` is the id of the last item of the previous page. */
export interface CompletionListQuery {
  after?: string;
  /** 1 to 100. */
  limit: number;
  order: "asc" | "desc";
  /** Only completions routed to this `provider/model`. */
  model?: string;
  /** Only completions whose metadata has every one of these pairs. */
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
 */
export interface Storage {
  /** Stores one completion in a single step: a reader never sees it half-written. */
  saveCompletion(entry: StoredCompletion): Promise<void>;
  getCompletion(id: string): Promise<StoredCompletion | undefined>;
  /**
   * One page in `createdAt` order. Listing a page must not read every stored item (an index, not a
   * scan). Returns `undefined` when `after` names no stored completion.
   */
  listCompletions(query: CompletionListQuery): Promise<CompletionPage | undefined>;
  /** Replaces the metadata; `undefined` when there is no such completion. */
  updateMetadata(id: string, metadata: Record<string, string>): Promise<StoredCompletion | undefined>;
  /** `false` when there was no such completion. */
  deleteCompletion(id: string): Promise<boolean>;
  /** Writes out what is pending; called on a graceful stop. */
  close?(): Promise<void> | void;
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

/** One rate-limit decision for a request, taken before the upstream call. */
export interface RateLimitDecision {
  allowed: boolean;
  /** Seconds until the request would be allowed, when it is not. */
  retryAfter: number;
  /** The `x-ratelimit-*` headers to send. */
  headers: Record<string, string>;
}

/** A rate-limit backend (contract §3, `rate_limit.plugin`). Built in its own issue. */
export interface RateLimiter {
  /** Counts one request (and reserved tokens) for the subject, atomically. */
  acquire(subject: RateLimitSubject, reservedTokens: number): Promise<RateLimitDecision>;
  /** Reconciles the reservation with the real usage once the reply is complete. */
  settle(subject: RateLimitSubject, reservedTokens: number, usage: Usage | undefined): Promise<void>;
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
