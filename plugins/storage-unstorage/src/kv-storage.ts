/**
 * Stored completions on an unstorage driver without native indexes (memory, fs): records under
 * `c:<id>`, ordered indexes as segmented lists (`segmented-index.ts`), both under the owner's key
 * prefix (`kvOwnerBase`: none for `default`, `o:<owner>:` otherwise); images (`images.ts`) and
 * usage counters (`usage-kv.ts`) beside them. Single-process: index appends are serialised with an
 * in-process mutex, so two routers must not share one fs directory.
 */
import type { CompletionListQuery, CompletionOwner, CompletionPage, PluginContext, Storage, StoredCompletion } from "@modelmux/core";
import type { Driver } from "unstorage";
import { guarded } from "./errors.ts";
import { kvImages } from "./images.ts";
import { kvUsage } from "./usage-kv.ts";
import { indexEntry, indexesOf, keySegment, kvIndexNames, kvOwnerBase, nextOrderKey, parseEntry, ttlCutoff } from "./keys.ts";
import { driverStore } from "./kv-store.ts";
import { KeyedMutex } from "./mutex.ts";
import { collectPage, cursorEntry, type EntryVerdict } from "./page.ts";
import { decodeRecord, encodeRecord, isCurrent, isExpired, isRecordOf, matchesQuery, type StoredRecord } from "./record.ts";
import { SegmentedIndexes } from "./segmented-index.ts";

export interface KvStorageOptions {
  /** An unstorage driver; values are written as JSON text and read back as text. */
  driver: Driver;
  /** Key prefix (a sub-directory on fs). */
  prefix: string;
  /** `storage.ttl` in ms; undefined keeps completions forever. */
  ttlMs: number | undefined;
  logger: Pick<PluginContext["logger"], "warn">;
}

/** A `Storage` on a plain key-value unstorage driver. */
export function createKvStorage({ driver, prefix, ttlMs, logger }: KvStorageOptions): Storage {
  const store = driverStore(driver, prefix);
  const indexes = new SegmentedIndexes(store);
  // Read-modify-write of one record (update, delete) must not interleave with a save of that id.
  // Keyed by record key: one owner's update never waits for another owner's save of the same id.
  const recordLocks = new KeyedMutex();
  const background = new Set<Promise<void>>();
  const recordKey = (owner: CompletionOwner, id: string) => `${kvOwnerBase(owner)}c:${keySegment(id)}`;

  /** Index upkeep that a reply need not wait for; `close()` waits for it. */
  function later(what: string, task: () => Promise<void>): void {
    // The core's logger is already tagged `storage:unstorage`.
    const run = task().catch((error: unknown) => logger.warn(`${what} failed:`, error));
    background.add(run);
    void run.finally(() => background.delete(run));
  }

  const images = kvImages(store, () => store.list("img"), later);
  // Keyed by day, apart from the record locks: a flush never waits for a completion's save.
  const usage = kvUsage(store, new KeyedMutex(), later);

  function verdict(record: StoredRecord | undefined, entry: string, query: CompletionListQuery): EntryVerdict {
    if (!isCurrent(record, entry) || isExpired(record, ttlMs)) return "stale";
    return matchesQuery(record, query) ? "match" : "skip";
  }

  /** The entries of `owner`'s index whose records still do not back them, read again. */
  async function stillStale(owner: CompletionOwner, entries: string[]): Promise<string[]> {
    const records = (await store.getMany(entries.map((entry) => recordKey(owner, parseEntry(entry).id)))).map(decodeRecord);
    return entries.filter((entry, i) => !isCurrent(records[i], entry) || isExpired(records[i]!, ttlMs));
  }

  async function readRecord(owner: CompletionOwner, id: string): Promise<StoredRecord | undefined> {
    const key = recordKey(owner, id);
    const record = decodeRecord(await store.get(key));
    // A hashed key (ids over 120 characters) could in theory be shared: the record says whose it is.
    if (!isRecordOf(record, owner, id)) return undefined;
    if (isExpired(record, ttlMs)) {
      // memory and fs have no expiry of their own: an expired record is deleted when met.
      await store.remove(key);
      return undefined;
    }
    return record;
  }

  /** Deletes the records of `owner`'s entries dropped from its "all" index because they expired. */
  async function purgeExpired(owner: CompletionOwner, entries: string[]): Promise<void> {
    for (let i = 0; i < entries.length; i += 64) {
      const ids = entries.slice(i, i + 64).map((entry) => entry.slice(entry.indexOf(" ") + 1));
      await Promise.all(ids.map((id) => recordLocks.run(recordKey(owner, id), async () => void (await readRecord(owner, id)))));
    }
  }

  async function addToIndexes(owner: CompletionOwner, names: string[], entry: string): Promise<void> {
    const cutoff = ttlCutoff(ttlMs);
    const all = kvIndexNames(owner).all;
    await Promise.all(
      names.map(async (name) => {
        const dropped = await indexes.insert(name, entry, cutoff);
        if (name === all && dropped.length > 0) later("purging expired completions", () => purgeExpired(owner, dropped));
      }),
    );
  }

  return {
    saveCompletion: (entry) =>
      guarded("saveCompletion", async () => {
        const { owner } = entry;
        const id = entry.completion.id;
        const key = recordKey(owner, id);
        const orderKey = nextOrderKey(entry.createdAt);
        const names = indexesOf(kvIndexNames(owner), entry);
        // Record first, then index entries: a list that meets an entry always finds its record
        // (an entry without one is taken for stale and removed). Meanwhile the indexes get ready
        // (files opened, a new index's file created), which adds no entry.
        const written = recordLocks.run(key, () => store.set(key, encodeRecord({ v: 1, orderKey, entry })));
        later("preparing indexes", () => Promise.all(names.map((name) => indexes.prepare(name))).then(() => undefined));
        await written;
        await addToIndexes(owner, names, indexEntry(orderKey, id));
      }),

    getCompletion: (owner, id) => guarded("getCompletion", async () => (await readRecord(owner, id))?.entry),

    listCompletions: (query) =>
      guarded("listCompletions", async (): Promise<CompletionPage | undefined> => {
        const { owner } = query;
        const after = await cursorEntry(query.after, (id) => readRecord(owner, id));
        if (after === null) return undefined;
        const ownerNames = kvIndexNames(owner);
        const pairs = Object.entries(query.metadata ?? {});
        const names = [
          ...(query.model === undefined ? [] : [ownerNames.model(query.model)]),
          ...pairs.map(([key, value]) => ownerNames.pair(key, value)),
        ];
        if (names.length === 0) names.push(ownerNames.all);
        const dirs = await Promise.all(names.map((name) => indexes.directory(name)));
        // Every filter must hold: one index that was never written means no completion matches.
        if (dirs.some((dir) => dir === undefined)) return { data: [], hasMore: false };
        // Walk the smallest of the matching indexes; the records confirm the other filters.
        let best = 0;
        dirs.forEach((dir, i) => dir!.segs.length < dirs[best]!.segs.length && (best = i));
        const name = names[best]!;
        return collectPage(
          {
            source: indexes.walk(name, dirs[best]!, query.order, after, ttlCutoff(ttlMs)),
            fetch: async (ids) => (await store.getMany(ids.map((id) => recordKey(owner, id)))).map(decodeRecord),
            check: (record, entry) => verdict(record, entry, query),
            onStale: (entries) => later("compacting an index", () => indexes.remove(name, entries, (stale) => stillStale(owner, stale))),
          },
          query.limit,
        );
      }),

    updateMetadata: (owner, id, metadata) =>
      guarded("updateMetadata", () =>
        recordLocks.run(recordKey(owner, id), async (): Promise<StoredCompletion | undefined> => {
          const record = await readRecord(owner, id);
          if (!record) return undefined;
          const updated: StoredRecord = { ...record, entry: { ...record.entry, metadata: { ...metadata } } };
          await store.set(recordKey(owner, id), encodeRecord(updated));
          // Old pairs' entries stay behind as hints the record now rejects; new pairs get one.
          const old = record.entry.metadata;
          const added = Object.entries(metadata).filter(([key, value]) => !Object.hasOwn(old, key) || old[key] !== value);
          const names = kvIndexNames(owner);
          await addToIndexes(owner, added.map(([key, value]) => names.pair(key, value)), indexEntry(record.orderKey, id));
          return updated.entry;
        }),
      ),

    deleteCompletion: (owner, id) =>
      guarded("deleteCompletion", () =>
        recordLocks.run(recordKey(owner, id), async () => {
          if (!(await readRecord(owner, id))) return false;
          // Its index entries now point at nothing; lists skip them and compact them when met.
          await store.remove(recordKey(owner, id));
          return true;
        }),
      ),

    saveImage: (key, image) => guarded("saveImage", () => images.saveImage(key, image)),
    getImage: (key) => guarded("getImage", () => images.getImage(key)),
    addUsage: (deltas) => guarded("addUsage", () => usage.addUsage(deltas)),
    readUsage: (range) => guarded("readUsage", () => usage.readUsage(range)),

    async close() {
      while (background.size > 0) await Promise.all([...background]);
      await store.dispose();
    },
  };
}
