/**
 * Order keys and index entries, shared by every driver.
 *
 * An order key is fixed-width text that sorts like (createdAt, storing order):
 * 15 digits of createdAt, 10 base-36 digits of a per-process sequence, 4 characters naming the
 * process. An index entry is `<order key> <id>`; because the key has a fixed width, entries sort as
 * the list orders them and the id is whatever follows the space, whatever characters it contains.
 */
import { createHash, randomBytes } from "node:crypto";
import type { StoredCompletion } from "@modelmux/core";

const TIME_DIGITS = 15;
const SEQ_DIGITS = 10;
/** Length of an order key; the id starts one character later. */
export const ORDER_KEY_LENGTH = TIME_DIGITS + SEQ_DIGITS + 4;

// Per process, not per storage instance: two instances sharing a directory in one process (a
// restart in tests) still get increasing keys. The tag tells apart processes sharing one Redis.
let sequence = 0;
const processTag = randomBytes(3).toString("base64url").slice(0, 4);

/** A fresh order key for a completion stored now with this `createdAt`. */
export function nextOrderKey(createdAt: number): string {
  sequence += 1;
  return timePrefix(createdAt) + sequence.toString(36).padStart(SEQ_DIGITS, "0") + processTag;
}

/** The part of an order key that `createdAt` decides; entries below it are older. */
export function timePrefix(createdAt: number): string {
  return String(Math.max(0, Math.floor(createdAt))).padStart(TIME_DIGITS, "0");
}

/**
 * The lowest entry that is still alive under a TTL: an entry sorts below it exactly when its
 * `createdAt + ttlMs <= now`, the rule `isExpired` applies to records.
 */
export function ttlCutoff(ttlMs: number | undefined, now = Date.now()): string | undefined {
  return ttlMs === undefined ? undefined : timePrefix(now - ttlMs + 1);
}

/** The index entry for a stored completion. */
export function indexEntry(orderKey: string, id: string): string {
  return `${orderKey} ${id}`;
}

// 15 digits, 10 base-36 digits, the 4-character base64url process tag, a space, a non-empty id.
const ENTRY_SHAPE = new RegExp(`^\\d{${TIME_DIGITS}}[0-9a-z]{${SEQ_DIGITS}}[\\w-]{4} [^]`);

/**
 * True when `text` has the shape of an index entry. A line cut short while it was written (a
 * crash mid-append, a read racing an append) fails this, or keeps the shape with a shortened id,
 * which no record confirms.
 */
export function isIndexEntry(text: string): boolean {
  return ENTRY_SHAPE.test(text);
}

/** Splits an index entry back into its order key and id. */
export function parseEntry(entry: string): { orderKey: string; id: string } {
  return { orderKey: entry.slice(0, ORDER_KEY_LENGTH), id: entry.slice(ORDER_KEY_LENGTH + 1) };
}

const SAFE = /[a-z0-9-]/;
const MAX_SEGMENT = 120;

/**
 * Turns any string into one key segment that every unstorage driver keeps as is: only `a-z`, `0-9`
 * and `-` stay; anything else becomes `_` and two hex digits per UTF-8 byte. Uppercase is escaped
 * too, so ids differing only by case stay two files on case-insensitive file systems, and `/`, `:`,
 * `?` or `..` never reach unstorage's key normalisation or a path. Segments over 120 characters
 * become `_h` + SHA-256 (a file name limit is 255 bytes); `_h` never comes out of the escaping.
 */
export function keySegment(text: string): string {
  let out = "";
  for (const char of text) {
    if (SAFE.test(char)) out += char;
    else for (const byte of Buffer.from(char, "utf8")) out += `_${byte.toString(16).padStart(2, "0")}`;
  }
  if (out.length === 0) return "_";
  return out.length > MAX_SEGMENT ? `_h${createHash("sha256").update(text).digest("hex")}` : out;
}

/** The owner whose completions keep the layout of the time before owners (see README.md). */
export const LEGACY_OWNER = "default";

/** The index names a completion belongs to: all, its models, each metadata pair. */
export interface IndexNames {
  all: string;
  model(model: string): string;
  pair(key: string, value: string): string;
}

/**
 * The key prefix of one owner's records and indexes on memory and fs: none for `default`, so
 * what was stored before owners existed stays where it was; `o:<owner>:` for any other, which no
 * key of the legacy layout starts with (those start with `c:`, `i:` or `img:`). keySegment never
 * writes `:`, so the owner's part ends at the first one.
 */
export function kvOwnerBase(owner: string): string {
  return owner === LEGACY_OWNER ? "" : `o:${keySegment(owner)}:`;
}

/** One owner's index names as unstorage key prefixes (memory, fs): `i:all`, `i:m:<model>`, `i:md:<key>=<value>`. */
export function kvIndexNames(owner: string): IndexNames {
  const base = `${kvOwnerBase(owner)}i:`;
  return {
    all: `${base}all`,
    model: (model) => `${base}m:${keySegment(model)}`,
    // keySegment escapes "=", so the pair ("a=b", "c") never meets ("a", "b=c"); two segments of at
    // most 130 characters keep the name under a file name's 255 bytes.
    pair: (key, value) => `${base}md:${keySegment(key)}=${keySegment(value)}`,
  };
}

/**
 * The models a completion is listed under: the routed `provider/model` and the name the stored
 * object shows (`completion.model`), so the list's `model` filter finds it by either.
 */
export function modelsOf(entry: StoredCompletion): string[] {
  const shown = entry.completion.model;
  return typeof shown === "string" && shown !== entry.model ? [entry.model, shown] : [entry.model];
}

/** Every index a completion belongs to. */
export function indexesOf(names: IndexNames, entry: StoredCompletion): string[] {
  return [names.all, ...modelsOf(entry).map(names.model), ...Object.entries(entry.metadata).map(([key, value]) => names.pair(key, value))];
}
