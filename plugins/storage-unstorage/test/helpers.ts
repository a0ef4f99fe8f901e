/** Sets up the plugin the way the core does, with a silent logger, plus test-only instruments. */
import { createLogger, type HttpClient, type Storage, type StorageContext } from "@modelmux/core";
import { sampleCompletion } from "@modelmux/core/testing";
import type { Driver } from "unstorage";
import plugin, { type UnstorageOptions } from "../src/index.ts";

/** A storage never needs the HTTP client. */
const offlineHttp: HttpClient = {
  async request() {
    throw new Error("storage-unstorage must not use the HTTP client");
  },
  async close() {},
};

export function storageContext(ttlMs?: number): StorageContext {
  return { name: "storage", logger: createLogger({ level: "silent" }), http: offlineHttp, ttlMs };
}

/** The plugin's `setup`, as the core calls it once options are validated. */
export async function setupStorage(options: UnstorageOptions, ttlMs?: number): Promise<Storage> {
  return plugin.setup(options, storageContext(ttlMs));
}

/**
 * A driver that counts its reads: records (`c:` keys) apart from index keys. It is never disposed,
 * so a test can `close()` a storage (which waits for background upkeep) and still inspect the data.
 */
export function countingDriver(driver: Driver): { driver: Driver; reads: { records: number; index: number; reset(): void } } {
  const reads = {
    records: 0,
    index: 0,
    reset() {
      reads.records = 0;
      reads.index = 0;
    },
  };
  const count = (key: string) => (/(^|:)c:/.test(key) ? reads.records++ : reads.index++);
  return {
    reads,
    driver: {
      ...driver,
      getItem(key, opts) {
        count(key);
        return driver.getItem(key, opts);
      },
      getItems: undefined,
      dispose: undefined,
    },
  };
}

/**
 * Saves `count` completions over two models and ten metadata buckets, `concurrency` at a time
 * (each batch with distinct createdAt, so the expected order is the id order).
 */
export async function fill(storage: Storage, count: number, concurrency = 50): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, i) => `bulk-${String(i).padStart(5, "0")}`);
  const base = Date.UTC(2025, 0, 1);
  for (let i = 0; i < count; i += concurrency) {
    await Promise.all(
      ids.slice(i, i + concurrency).map((id, j) =>
        storage.saveCompletion(sampleCompletion(id, { createdAt: base + (i + j) * 10, model: (i + j) % 2 ? "kit/odd" : "kit/even", metadata: { bucket: String((i + j) % 10) } })),
      ),
    );
  }
  return ids;
}

/** Every id of a list (of the owner `default` unless `owner` says), following `after` page by page. */
export async function listAll(
  storage: Storage,
  query: { owner?: string; order?: "asc" | "desc"; model?: string; metadata?: Record<string, string>; limit?: number } = {},
): Promise<string[]> {
  const ids: string[] = [];
  for (let after: string | undefined; ; ) {
    const page = await storage.listCompletions({ owner: query.owner ?? "default", limit: query.limit ?? 100, order: query.order ?? "asc", model: query.model, metadata: query.metadata, after });
    if (!page) throw new Error(`after=${after} was not found`);
    ids.push(...page.data.map((entry) => entry.completion.id));
    if (!page.hasMore) return ids;
    after = ids.at(-1);
  }
}
