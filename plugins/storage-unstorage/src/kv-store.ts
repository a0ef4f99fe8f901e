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
