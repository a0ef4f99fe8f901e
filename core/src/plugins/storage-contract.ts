/**
 * The storage plugin's side of the plugin contract (`core/src/plugin.ts`): what a `storage` plugin
 * keeps for stored chat completions, for image URLs and for usage counters (README, "Stored
 * completions", "Images" and "Usage"), and `defineStorage`. The conformance kit `testStorage` of `@modelmux/core/testing`
 * checks a plugin against it.
 */
import type { JsonSchema, PluginContext } from "../plugin.ts";
import type { ChatCompletion, ChatCompletionWithoutUsage, ChatMessage } from "../types/chat.ts";

/**
 * The app a stored completion belongs to (README, "Stored completions"): the caller's
 * `Principal.app`, i.e. the API key's `app` (`"default"` for a key without one) or the app claim
 * of an identity-provider token. Stored completions of one owner are invisible to every other:
 * a storage keeps owners apart as if each had a store of its own.
 */
export type CompletionOwner = string;

/** One stored chat completion (README, "Stored completions"): what `store: true` keeps once the reply is complete. */
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
 * A storage backend for stored chat completions (README, "Stored completions"). Ids are the
 * completions' own (`completion.id`). Deleted and expired completions behave as never stored:
 * `undefined`/`false`, and absent from lists.
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
 * This is version 2 of the contract (`STORAGE_CONTRACT`): a plugin says so with `contract: 2` in
 * `defineStorage`, and one without it (written for the contract before owners) is refused at load.
 * Updating such a plugin: take the owner first in get, update and delete, keep `entry.owner` and
 * `query.owner` apart in the key layout, return `owner` on every entry (README, "Plugins").
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
   * Optional: keeps a generated image served by URL (README, "Images") until `image.expiresAt`; `key`
   * is a digest of the URL's secret token. Images have no owner: the URL's token is the credential.
   * Without these two methods the core keeps images in its own memory, which a second router
   * instance cannot see.
   */
  saveImage?(key: string, image: StoredImage): Promise<void>;
  /** The image saved under `key`, or `undefined` once it expired or when there is none. */
  getImage?(key: string): Promise<StoredImage | undefined>;
  /**
   * Optional: adds usage counters (README, "Usage"): each delta's counts are added to those kept
   * under its hour, app, developer and model, in one atomic step per call where the backend has
   * one, so routers sharing the backend count together and lose no increment. The core calls it
   * off the request path, about once a second, with what ended since. A plugin that has this
   * method has `readUsage` too; without both the core counts usage in its own memory, per router.
   */
  addUsage?(deltas: readonly UsageDelta[]): Promise<void>;
  /**
   * The counters of every hour of the UTC days `range.firstDay` to `range.lastDay` (inclusive),
   * one row per hour, app, developer and model that has any (rows for the same key are added up by
   * the core). Counters older than the plugin's retention (docs/plugins.md, "Usage counters") may
   * be gone.
   */
  readUsage?(range: UsageRange): Promise<UsageRow[]>;
  /**
   * Optional: whether the backend answers now (a Redis PING, a folder that takes a file), for
   * `GET /readyz` (docs/plugins.md, "Readiness"). Resolves when it does; throws an `Error` whose
   * message says why not. The core bounds it (2 s); its message is in the reply to a probe that
   * carries no key, so it names the problem, never a URL's credentials. Without it the storage
   * counts as ready once set up.
   */
  ready?(): Promise<void> | void;
  /** Writes out what is pending; called on a graceful stop. */
  close?(): Promise<void> | void;
}

/** What one hour of one app, developer and model counted (README, "Usage"). */
export interface UsageCounts {
  requests: number;
  /** Requests answered with an error status (400 and above, 499 included) or whose stream failed. */
  errors: number;
  /** Prompt tokens, as the provider reported them. */
  inputTokens: number;
  /** Completion tokens, as the provider reported them. */
  outputTokens: number;
  /**
   * The cost in nano-dollars (1e-9 USD): an integer, each request's rounded once, so sums are exact
   * in any order and on any number of routers (an integer counter: Redis `HINCRBY`, SQL `bigint`).
   */
  costNanoUsd: number;
}

/** Counts to add under one hour, app, developer and model; a row read back has the same shape. */
export interface UsageDelta extends UsageCounts {
  /** The UTC hour: `YYYY-MM-DDTHH` (`2026-11-25T13`). */
  hour: string;
  /** Any string, `""` included: keep labels apart in the key layout whatever their characters. */
  app: string;
  developer: string;
  /** The served `provider/model`. */
  model: string;
}

export type UsageRow = UsageDelta;

/** UTC days, `YYYY-MM-DD`, both inclusive; at most 366 of them. */
export interface UsageRange {
  firstDay: string;
  lastDay: string;
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

/**
 * The version of the `Storage` contract this core speaks. 2: every call names the owner (first in
 * `getCompletion`, `updateMetadata` and `deleteCompletion`; `owner` on saved and returned entries
 * and on list queries). A plugin states the version it was written for in its definition's
 * `contract`; the core refuses at load a plugin that states another or none (a plugin written
 * before owners would otherwise load and then find nothing: README, "Plugins").
 */
export const STORAGE_CONTRACT = 2;

export interface StorageDefinition<Options = Record<string, unknown>> {
  kind: "storage";
  /**
   * The version of the `Storage` contract the plugin implements: `2`, the contract with owners.
   * Required: the core refuses a storage plugin without it when it loads, naming what changed.
   * Write the number itself, not an imported constant: it is the plugin's own statement.
   */
  contract: typeof STORAGE_CONTRACT;
  /** The plugin's name, used in logs and errors (`[modelmux] [storage:unstorage] …`). */
  name: string;
  optionsSchema: JsonSchema;
  setup(options: Options, ctx: StorageContext): Storage | Promise<Storage>;
}

/**
 * Defines a storage plugin for stored chat completions.
 * @example
 * export default defineStorage<{ url: string }>({
 *   contract: 2,
 *   name: "acme",
 *   optionsSchema: { type: "object", properties: { url: { type: "string" } }, required: ["url"] },
 *   setup: (options, ctx) => createAcmeStorage(options.url, ctx.ttlMs),
 * });
 */
export function defineStorage<Options>(definition: Omit<StorageDefinition<Options>, "kind">): StorageDefinition<Options> {
  return { kind: "storage", ...definition };
}
