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
  /**
   * Adds `text` at the end of the value (creating it when absent). Not atomic: a crash can leave
   * part of `text`, which is why index lines start with "\n" (see `segment-text.ts`). On fs an
   * `fs.appendFile`; on other drivers a read, a concatenation and a write.
   */
  append(key: string, text: string): Promise<void>;
  /**
   * Lets a later write of `key` skip its set-up: fs makes the key's folder. Resolves `true` when
   * that shows nothing is stored in the folder (fs: the folder did not exist), `false` when it
   * cannot tell (the folder existed; other drivers).
   */
  prepareKey(key: string): Promise<boolean>;
  /** A hint that `append(key)` comes soon: fs opens (or creates, empty) the file meanwhile. */
  prepareAppend(key: string): void;
  remove(key: string): Promise<void>;
  /** The keys directly under `folder` (`img` lists `img:<name>`), as the names after the folder. */
  list(folder: string): Promise<string[]>;
  dispose(): Promise<void>;
}

const asText = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/** A driver that can append to a value in place, as `atomicFsDriver` can. */
export interface AppendingDriver extends Driver {
  appendItem(key: string, text: string): Promise<void>;
  /** Makes the folder of `key`; `true` when it did not exist. */
  prepareKey(key: string): Promise<boolean>;
  /** Opens (or creates, empty) the file of `key` for a coming `appendItem`. */
  prepareAppend(key: string): void;
  /** The names of the files directly in the folder of `key`. */
  listFolder(key: string): Promise<string[]>;
}

const canAppend = (driver: Driver): driver is AppendingDriver => typeof (driver as Partial<AppendingDriver>).appendItem === "function";

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
    async append(key, text) {
      if (canAppend(driver)) return driver.appendItem(full(key), text);
      if (!driver.setItem) throw new Error(`driver ${driver.name ?? "?"} is read-only`);
      await driver.setItem(full(key), (asText(await driver.getItem(full(key))) ?? "") + text, {});
    },
    async prepareKey(key) {
      return canAppend(driver) ? driver.prepareKey(full(key)) : false;
    },
    prepareAppend(key) {
      if (canAppend(driver)) driver.prepareAppend(full(key));
    },
    async list(folder) {
      if (canAppend(driver)) return driver.listFolder(full(folder));
      const start = `${full(folder)}:`;
      const keys = (await driver.getKeys(full(folder), {})) as string[];
      return keys.filter((key) => key.startsWith(start) && !key.slice(start.length).includes(":")).map((key) => key.slice(start.length));
    },
    async remove(key) {
      await driver.removeItem?.(full(key), {});
    },
    async dispose() {
      await driver.dispose?.();
    },
  };
}
