import { sampleCompletion, testStorage } from "@modelmux/core/testing";
import { describe, expect, test } from "vitest";
import memoryDriver from "unstorage/drivers/memory";
import plugin, { createKvStorage } from "../src/index.ts";
import { countingDriver, fill, listAll, setupStorage, storageContext } from "./helpers.ts";
import { testKvLayout } from "./kv-layout.ts";

const T0 = Date.UTC(2025, 0, 1);
const counted = (ttlMs?: number) => {
  const { driver, reads } = countingDriver(memoryDriver());
  const storage = createKvStorage({ driver, prefix: "modelmux", ttlMs, logger: storageContext().logger });
  return { storage, reads, driver };
};

describe("storage-unstorage on memory: indexes", () => {
  test("a page out of 2,000 stored completions reads a few keys, not 2,000", async () => {
    const { storage, reads } = counted();
    const ids = await fill(storage, 2000);
    const pages = [
      { limit: 20, order: "asc" as const },
      { limit: 20, order: "desc" as const },
      { limit: 20, order: "asc" as const, after: ids[1234] },
      { limit: 20, order: "desc" as const, after: ids[777] },
      { limit: 20, order: "asc" as const, metadata: { bucket: "3" } },
      { limit: 20, order: "desc" as const, model: "kit/odd", metadata: { bucket: "3" }, after: ids[1503] },
    ];
    for (const query of pages) {
      reads.reset();
      const page = await storage.listCompletions({ owner: "default", ...query });
      expect(page!.data).toHaveLength(20);
      expect(page!.hasMore).toBe(true);
      // 21 records (the 21st says hasMore), the `after` record, 1-3 directories, 1-2 segments.
      expect(reads.records).toBeLessThanOrEqual(22);
      expect(reads.index).toBeLessThanOrEqual(6);
    }
    await storage.close?.();
  });

  test("pages across segment boundaries in both orders match the full order", async () => {
    const { storage } = counted();
    const ids = await fill(storage, 1300);
    expect(await listAll(storage, { limit: 97 })).toEqual(ids);
    expect(await listAll(storage, { limit: 97, order: "desc" })).toEqual([...ids].reverse());
    expect(await listAll(storage, { metadata: { bucket: "7" }, limit: 33 })).toEqual(ids.filter((_, i) => i % 10 === 7));
    await storage.close?.();
  });

  test("stays ordered by createdAt when saves and metadata updates arrive out of order (segment splits)", async () => {
    const { storage } = counted();
    // A fixed shuffle of 1,200 createdAt values: inserts land in every segment and split them.
    const order = Array.from({ length: 1200 }, (_, i) => (i * 577) % 1200);
    for (const n of order) await storage.saveCompletion(sampleCompletion(`s${n}`, { createdAt: T0 + n }));
    const expected = Array.from({ length: 1200 }, (_, n) => `s${n}`);
    expect(await listAll(storage)).toEqual(expected);
    expect(await listAll(storage, { order: "desc", limit: 71 })).toEqual([...expected].reverse());
    for (const n of order.slice(0, 700)) await storage.updateMetadata("default", `s${n}`, { late: "yes" });
    const tagged = expected.filter((_, n) => order.slice(0, 700).includes(n));
    expect(await listAll(storage, { metadata: { late: "yes" }, limit: 50 })).toEqual(tagged);
    await storage.close?.();
  });

  test("deleted entries are skipped and compacted out of the index", async () => {
    const { storage, reads } = counted();
    const ids = await fill(storage, 600);
    for (const id of ids.slice(0, 550)) await storage.deleteCompletion("default", id);
    reads.reset();
    const first = await storage.listCompletions({ owner: "default", limit: 10, order: "asc" });
    expect(first!.data.map((e) => e.completion.id)).toEqual(ids.slice(550, 560));
    const before = reads.records;
    await storage.close?.(); // waits for the compaction the list started
    reads.reset();
    const again = await storage.listCompletions({ owner: "default", limit: 10, order: "asc" });
    expect(again!.data.map((e) => e.completion.id)).toEqual(ids.slice(550, 560));
    expect(reads.records).toBeLessThan(before);
    expect(reads.records).toBeLessThanOrEqual(11);
  });

  test("an index whose every entry was deleted and compacted out takes new entries", async () => {
    const { storage } = counted();
    const ids = await fill(storage, 1100);
    for (const id of ids) await storage.deleteCompletion("default", id);
    expect(await listAll(storage)).toEqual([]);
    await storage.close?.(); // waits for the compaction
    expect(await listAll(storage)).toEqual([]);
    await storage.saveCompletion(sampleCompletion("again", { createdAt: T0 }));
    expect(await listAll(storage)).toEqual(["again"]);
    expect(await listAll(storage, { order: "desc" })).toEqual(["again"]);
  });

  test("with a TTL, expired segments and their records are purged as new completions arrive", async () => {
    const { storage, driver } = counted(60_000);
    const old = Date.now() - 120_000;
    for (let i = 0; i < 1100; i++) await storage.saveCompletion(sampleCompletion(`old-${i}`, { createdAt: old + i }));
    await storage.saveCompletion(sampleCompletion("fresh", { createdAt: Date.now() }));
    await storage.close?.(); // waits for the purge
    const keys = [...(driver.getInstance!() as Map<string, string>).keys()];
    const records = keys.filter((key) => key.startsWith("modelmux:c:"));
    // The two full head segments went with their 1,024 records; at most one segment's worth is left.
    expect(records.length).toBeLessThanOrEqual(1100 - 1024 + 1);
    expect(records).toContain("modelmux:c:fresh");
  });

  test("ids and metadata that look like numbers stay strings", async () => {
    const storage = await setupStorage({ driver: "memory" });
    await storage.saveCompletion(sampleCompletion("123", { metadata: { "456": "789" } }));
    const stored = await storage.getCompletion("default", "123");
    expect(stored!.completion.id).toBe("123");
    expect(stored!.metadata).toEqual({ "456": "789" });
    expect((await storage.listCompletions({ owner: "default", limit: 1, order: "asc", metadata: { "456": "789" } }))!.data[0]!.completion.id).toBe("123");
  });
});

testStorage({
  name: "storage-unstorage (memory)",
  plugin,
  create: () => setupStorage({ driver: "memory" }),
  ttl: { create: (ttlMs) => setupStorage({ driver: "memory" }, ttlMs) },
});

testKvLayout("memory", () => setupStorage({ driver: "memory" }));
