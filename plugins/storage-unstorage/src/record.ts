/**
 * The stored record: the completion as the core handed it over, plus its order key. The record is
 * the truth; index entries are hints, and every entry read from an index is checked against it.
 */
import type { CompletionListQuery, StoredCompletion } from "@modelmux/core";
import { LEGACY_OWNER, parseEntry } from "./keys.ts";

/** What is kept under a record key, as JSON text. */
export interface StoredRecord {
  /** Format version, so a later layout can read older records. */
  v: 1;
  /** Where the completion sits in every index; a re-save gets a new one. */
  orderKey: string;
  entry: StoredCompletion;
}

/**
 * Parses a record. We always parse JSON text ourselves (never unstorage's `getItem` coercion),
 * so an id or metadata value such as "123" stays a string.
 */
export function decodeRecord(text: unknown): StoredRecord | undefined {
  if (typeof text !== "string" || text.length === 0) return undefined;
  const record = JSON.parse(text) as StoredRecord;
  if (record?.v !== 1) return undefined;
  // Records written before completions had owners sit in the `default` owner's layout.
  record.entry.owner ??= LEGACY_OWNER;
  return record;
}

export function encodeRecord(record: StoredRecord): string {
  return JSON.stringify(record);
}

/** True when `storage.ttl` has passed since the completion was stored. */
export function isExpired(record: StoredRecord, ttlMs: number | undefined, now = Date.now()): boolean {
  return ttlMs !== undefined && record.entry.createdAt + ttlMs <= now;
}

/** True when the record is the one this index entry was written for (not replaced since). */
export function isCurrent(record: StoredRecord | undefined, entry: string): record is StoredRecord {
  if (!record) return false;
  const { orderKey, id } = parseEntry(entry);
  return record.orderKey === orderKey && record.entry.completion.id === id;
}

/**
 * True when the record is the query owner's and passes its `model` (the routed name or the one
 * the completion shows) and every `metadata` pair.
 */
export function matchesQuery(record: StoredRecord, query: Pick<CompletionListQuery, "owner" | "model" | "metadata">): boolean {
  const { entry } = record;
  if (entry.owner !== query.owner) return false;
  if (query.model !== undefined && entry.model !== query.model && entry.completion.model !== query.model) return false;
  // Own keys only: a key such as `__proto__` or `constructor` must not read the prototype.
  for (const [key, value] of Object.entries(query.metadata ?? {})) {
    if (!Object.hasOwn(entry.metadata, key) || entry.metadata[key] !== value) return false;
  }
  return true;
}

/** True when the record is the completion `id` of `owner` (a hashed or lossy key could be shared). */
export function isRecordOf(record: StoredRecord | undefined, owner: string, id: string): record is StoredRecord {
  return record !== undefined && record.entry.completion.id === id && record.entry.owner === owner;
}
