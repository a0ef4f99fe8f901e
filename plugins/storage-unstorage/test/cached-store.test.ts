import { describe, expect, test } from "vitest";
import { cachedStore, type KvStore } from "../src/kv-store.ts";

/** A store whose next `failures` writes fail. */
function flakyStore(failures: number) {
  const data = new Map<string, string>();
  const store: KvStore = {
    get: async (key) => data.get(key),
    getMany: async (keys) => keys.map((key) => data.get(key)),
    async set(key, value) {
      if (failures > 0) {
        failures--;
        throw new Error("disk hiccup");
      }
      data.set(key, value);
    },
    remove: async (key) => void data.delete(key),
    dispose: async () => {},
  };
  return { store, data };
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("cachedStore (write-behind index keys)", () => {
  test("serves its own writes at once and writes them out in one later batch", async () => {
    const { store, data } = flakyStore(0);
    const cached = cachedStore(store, (key) => key.startsWith("i:"), { maxEntries: 10, flushMs: 20 });
    await cached.set("i:a", "1");
    await cached.set("i:a", "2");
    await cached.set("c:record", "r");
    expect(await cached.get("i:a")).toBe("2");
    expect(data.get("i:a")).toBeUndefined();
    expect(data.get("c:record")).toBe("r");
    await settle(60);
    expect(data.get("i:a")).toBe("2");
  });

  test("a failed batch is retried, and does not stop the batches after it", async () => {
    const { store, data } = flakyStore(1);
    const cached = cachedStore(store, (key) => key.startsWith("i:"), { maxEntries: 10, flushMs: 10 });
    await cached.set("i:a", "1");
    await settle(40);
    expect(data.get("i:a")).toBeUndefined();
    await cached.set("i:b", "2");
    await settle(40);
    expect([data.get("i:a"), data.get("i:b")]).toEqual(["1", "2"]);
  });

  test("never drops a key not yet written, and dispose writes everything", async () => {
    const { store, data } = flakyStore(0);
    const cached = cachedStore(store, (key) => key.startsWith("i:"), { maxEntries: 2, flushMs: 10_000 });
    for (let i = 0; i < 5; i++) await cached.set(`i:${i}`, String(i));
    for (let i = 0; i < 5; i++) expect(await cached.get(`i:${i}`)).toBe(String(i));
    await cached.dispose();
    expect([...data.keys()].sort()).toEqual(["i:0", "i:1", "i:2", "i:3", "i:4"]);
  });
});
