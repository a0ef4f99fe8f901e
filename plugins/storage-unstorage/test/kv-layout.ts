/**
 * Tests of the memory/fs index layout under concurrency (appends, new tails and splits racing each
 * other and lists), run by `memory.test.ts` and `fs.test.ts` on their own storages.
 */
import type { Storage } from "@modelmux/core";
import { sampleCompletion } from "@modelmux/core/testing";
import { describe, expect, test } from "vitest";
import { fill, listAll } from "./helpers.ts";

const T0 = Date.UTC(2025, 0, 1);
const pad = (n: number) => String(n).padStart(5, "0");

/** Lists in a loop until `stop()` is called; resolves once the last list is done. */
function pollLists(storage: Storage): { stop(): Promise<void> } {
  let running = true;
  const pollers = Array.from({ length: 2 }, async () => {
    while (running) {
      await storage.listCompletions({ owner: "default", limit: 50, order: "desc" });
      await new Promise((resolve) => setImmediate(resolve));
    }
  });
  return {
    stop: async () => {
      running = false;
      await Promise.all(pollers);
    },
  };
}

export function testKvLayout(name: string, create: () => Promise<Storage>): void {
  describe(`storage-unstorage (${name}): index segments under concurrency`, () => {
    test("concurrent saves on one index keep every entry, across segment boundaries and out of order", async () => {
      const storage = await create();
      // 1,300 saves, 100 at a time, createdAt in a fixed shuffle: appends, new tails and splits of
      // the same indexes all happen while other saves of that index are in flight.
      const count = 1300;
      const order = Array.from({ length: count }, (_, i) => (i * 577) % count);
      const polling = pollLists(storage);
      for (let i = 0; i < count; i += 100) {
        await Promise.all(order.slice(i, i + 100).map((n) => storage.saveCompletion(sampleCompletion(`c${pad(n)}`, { createdAt: T0 + n, metadata: { one: "index" } }))));
      }
      await polling.stop();
      const expected = Array.from({ length: count }, (_, n) => `c${pad(n)}`);
      expect(await listAll(storage)).toEqual(expected);
      expect(await listAll(storage, { order: "desc", limit: 77 })).toEqual([...expected].reverse());
      expect(await listAll(storage, { metadata: { one: "index" } })).toEqual(expected);
      await storage.close?.();
    }, 60_000);

    test("a segment split while appends to the tail and lists run loses nothing", async () => {
      const storage = await create();
      const ids = await fill(storage, 600); // createdAt base + 10 i: a full first segment and a tail
      const base = Date.UTC(2025, 0, 1);
      // Back-dated saves land in the full first segment (and split it, then its halves); newer
      // ones append to the tail; both kinds in flight together.
      const older = Array.from({ length: 300 }, (_, i) => sampleCompletion(`old-${pad(i)}`, { createdAt: base + i * 10 + 5, model: "kit/even", metadata: { bucket: "0" } }));
      const newer = Array.from({ length: 300 }, (_, i) => sampleCompletion(`new-${pad(i)}`, { createdAt: base + 10_000 + i, model: "kit/even", metadata: { bucket: "0" } }));
      const polling = pollLists(storage);
      for (let i = 0; i < 300; i += 30) {
        await Promise.all([...older.slice(i, i + 30), ...newer.slice(i, i + 30)].map((entry) => storage.saveCompletion(entry)));
      }
      await polling.stop();
      const expected = [...ids.map((id, i) => [i * 10, id] as const), ...older.map((e, i) => [i * 10 + 5, e.completion.id] as const), ...newer.map((e, i) => [10_000 + i, e.completion.id] as const)]
        .sort(([a], [b]) => a - b)
        .map(([, id]) => id);
      expect(await listAll(storage)).toEqual(expected);
      expect(await listAll(storage, { order: "desc" })).toEqual([...expected].reverse());
      const evenZero = new Set([...ids.filter((_, i) => i % 10 === 0), ...older.map((e) => e.completion.id), ...newer.map((e) => e.completion.id)]);
      expect(await listAll(storage, { model: "kit/even", metadata: { bucket: "0" } })).toEqual(expected.filter((id) => evenZero.has(id)));
      await storage.close?.();
    }, 60_000);
  });
}
