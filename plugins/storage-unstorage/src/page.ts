/**
 * Assembling one list page from an ordered index, the same way for every driver: read entries in
 * list order, fetch their records in one batch, keep the ones the record confirms, and stop as soon
 * as `limit + 1` are found (the extra one only says `hasMore`). The work is proportional to the
 * page, plus whatever stale entries sit in the way, never to the number of stored completions.
 */
import type { CompletionPage, StoredCompletion } from "@modelmux/core";
import { indexEntry, parseEntry } from "./keys.ts";
import type { StoredRecord } from "./record.ts";

/**
 * The index entry a list resumes after: undefined without a cursor, `null` when the cursor names
 * no stored completion (the caller answers 404).
 */
export async function cursorEntry(after: string | undefined, read: (id: string) => Promise<StoredRecord | undefined>): Promise<string | null | undefined> {
  if (after === undefined) return undefined;
  const record = await read(after);
  return record ? indexEntry(record.orderKey, after) : null;
}

/** Gives the next `count` entries in list order; fewer (or none) when the index ends. */
export type EntrySource = (count: number) => Promise<string[]>;

/**
 * What an entry turned out to be once its record was read: a `match`; a completion the query's
 * other filters reject (`skip`); or `stale`, an entry its record no longer backs (deleted,
 * expired, re-saved, metadata changed), which the caller may remove from the index.
 */
export type EntryVerdict = "match" | "skip" | "stale";

export interface PageReader {
  source: EntrySource;
  /** The records of these ids, in the same order; `undefined` where there is none. */
  fetch(ids: string[]): Promise<(StoredRecord | undefined)[]>;
  check(record: StoredRecord | undefined, entry: string): EntryVerdict;
  /** Told about stale entries, to clean the index lazily; optional. */
  onStale?(entries: string[]): Promise<void> | void;
}

// Later batches grow when earlier ones were mostly stale or filtered out, so a page behind many
// deleted entries takes a few round trips, not one per entry.
const MAX_BATCH = 512;

/** Reads one page: at most `limit` completions and whether more follow. */
export async function collectPage(reader: PageReader, limit: number): Promise<CompletionPage> {
  const found: StoredCompletion[] = [];
  for (let round = 0; found.length <= limit; round += 1) {
    const need = limit + 1 - found.length;
    const entries = await reader.source(Math.min(MAX_BATCH, need * 2 ** round));
    if (entries.length === 0) break;
    const records = await reader.fetch(entries.map((entry) => parseEntry(entry).id));
    const stale: string[] = [];
    entries.forEach((entry, i) => {
      const record = records[i];
      const verdict = reader.check(record, entry);
      if (verdict === "stale") stale.push(entry);
      else if (verdict === "match" && record && found.length <= limit) found.push(record.entry);
    });
    if (stale.length > 0) await reader.onStale?.(stale);
  }
  return { data: found.slice(0, limit), hasMore: found.length > limit };
}
