/**
 * The few key-value calls the memory and fs layouts need, on an unstorage driver used directly.
 * Going to the driver, not through `createStorage`, keeps values as the exact JSON text we wrote:
 * unstorage's `getItem` would turn "123" into 123 and drop `__proto__` keys, and its key
 * normalisation would fold `/` into `:`. Our keys are already safe (see `keySegment`).
 */
import type { Driver } from "unstorage";
import { keySegment } from "./keys.ts";

export interface KvStore {
  get(key: string): Promise<string | undefined>;
  /** One value per key, in order; drivers with a batch read (`getItems`) use it. */
  getMany(keys: string[]): Promise<(string | undefined)[]>;
  set(key: string, value: string): Promise<void>;
  remove(key: string): Promise<void>;
  dispose(): Promise<void>;
}

const asText = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/**
 * A `KvStore` on an unstorage driver, every key under `prefix` (each `:`-separated part made a
 * safe segment, so the prefix is a sub-directory on fs).
 */
export function driverStore(driver: Driver, prefix: string): KvStore {
  const base = prefix.split(":").filter(Boolean).map(keySegment).join(":");
  const full = (key: string) => (base ? `${base}:${key}` : key);
  return {
    async get(key) {
      return asText(await driver.getItem(full(key)));
    },
    async getMany(keys) {
      if (keys.length === 0) return [];
      if (driver.getItems) {
        const items = await driver.getItems(keys.map((key) => ({ key: full(key) })));
        const byKey = new Map(items.map((item) => [item.key, item.value]));
        return keys.map((key) => asText(byKey.get(full(key))));
      }
      return Promise.all(keys.map(async (key) => asText(await driver.getItem(full(key)))));
    },
    async set(key, value) {
      if (!driver.setItem) throw new Error(`driver ${driver.name ?? "?"} is read-only`);
      await driver.setItem(full(key), value, {});
    },
    async remove(key) {
      await driver.removeItem?.(full(key), {});
    },
    async dispose() {
      await driver.dispose?.();
    },
  };
}

/**
 * A cache in front of a store, for the keys `cached(key)` selects, for a store this process alone
 * writes (the fs layout: one router per directory), so what it holds is what is there. Writes of
 * those keys are write-behind: kept here at once, and written out together every `flushMs`
 * (several updates of one key become one write). At most `maxEntries` clean keys are kept, least
 * recently used out first; keys not yet written are never dropped. `dispose()` writes them first.
 */
export function cachedStore(inner: KvStore, cached: (key: string) => boolean, options: { maxEntries: number; flushMs: number }): KvStore {
  const cache = new Map<string, string | undefined>();
  const dirty = new Map<string, string>();
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();

  const remember = (key: string, value: string | undefined) => {
    cache.delete(key);
    cache.set(key, value);
    for (const oldest of cache.keys()) {
      if (cache.size <= options.maxEntries) break;
      if (!dirty.has(oldest)) cache.delete(oldest);
    }
  };
  const flush = (): Promise<void> => {
    timer = undefined;
    const batch = [...dirty];
    dirty.clear();
    // One batch at a time, so an older value never lands after a newer one; a failed batch must
    // not stop the ones after it (its keys are back in `dirty`).
    flushing = flushing.catch(() => {}).then(async () => {
      const results = await Promise.allSettled(batch.map(([key, value]) => inner.set(key, value)));
      const failed = results.findIndex((r) => r.status === "rejected");
      if (failed >= 0) {
        // Keep what failed for the next flush unless it was overwritten meanwhile.
        batch.forEach(([key, value], i) => results[i]!.status === "rejected" && !dirty.has(key) && dirty.set(key, value));
        throw (results[failed] as PromiseRejectedResult).reason;
      }
    });
    return flushing;
  };

  return {
    async get(key) {
      if (!cached(key)) return inner.get(key);
      if (dirty.has(key)) return dirty.get(key);
      if (cache.has(key)) {
        const value = cache.get(key);
        remember(key, value);
        return value;
      }
      const value = await inner.get(key);
      remember(key, value);
      return value;
    },
    getMany: (keys) => inner.getMany(keys),
    async set(key, value) {
      if (!cached(key)) return inner.set(key, value);
      // Dirty first: remember() may evict, and must never evict a key not yet written.
      dirty.set(key, value);
      remember(key, value);
      timer ??= setTimeout(() => void flush().catch(() => {}), options.flushMs);
    },
    async remove(key) {
      dirty.delete(key);
      cache.delete(key);
      await flushing.catch(() => {});
      await inner.remove(key);
    },
    async dispose() {
      if (timer) clearTimeout(timer);
      await flush();
      await inner.dispose();
    },
  };
}
