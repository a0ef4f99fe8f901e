import { randomBytes } from "node:crypto";
import { sampleCompletion, startSilentServer, testStorage, type SilentServer } from "@modelmux/core/testing";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import plugin from "../src/index.ts";
import { fill, listAll, setupStorage } from "./helpers.ts";
import { deletePrefix, REDIS_URL, redisGate } from "./redis-gate.ts";

const SUITE = "storage-unstorage (redis)";
const { skip } = await redisGate(SUITE);
// One prefix per run, one more level per storage, all removed at the end.
const RUN = `modelmux-test:${process.pid}-${randomBytes(3).toString("hex")}`;
let storages = 0;
const freshPrefix = () => `${RUN}:${++storages}`;
const redisStorage = (prefix = freshPrefix(), ttlMs?: number) => setupStorage({ driver: "redis", url: REDIS_URL, prefix }, ttlMs);

afterAll(async () => {
  if (skip === undefined) await deletePrefix(RUN);
});

describe.skipIf(skip !== undefined)("storage-unstorage on redis", () => {
  // Made in a hook: a skipped describe's body still runs, and must not connect.
  let raw: Redis;
  beforeAll(() => void (raw = new Redis(REDIS_URL)));
  afterAll(() => raw.disconnect());

  test("a new storage on the same prefix sees the data of an earlier one (restart)", async () => {
    const prefix = freshPrefix();
    const before = await redisStorage(prefix);
    const ids = await fill(before, 40, 10);
    await before.deleteCompletion("default", ids[3]!);
    await before.updateMetadata("default", ids[4]!, { bucket: "x" });
    await before.close?.();
    const after = await redisStorage(prefix);
    const alive = ids.filter((_, i) => i !== 3);
    expect(await listAll(after, { limit: 7 })).toEqual(alive);
    expect(await listAll(after, { order: "desc" })).toEqual([...alive].reverse());
    expect(await listAll(after, { metadata: { bucket: "x" } })).toEqual([ids[4]]);
    expect(await after.getCompletion("default", ids[3]!)).toBeUndefined();
    await after.close?.();
  });

  test("two instances saving at once on one prefix lose no index entry", async () => {
    const prefix = freshPrefix();
    const [a, b] = await Promise.all([redisStorage(prefix), redisStorage(prefix)]);
    const t0 = Date.UTC(2025, 0, 1);
    await Promise.all(
      Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).saveCompletion(sampleCompletion(`pair-${String(i).padStart(3, "0")}`, { createdAt: t0 + i, metadata: { shared: "yes" } }))),
    );
    const expected = Array.from({ length: 200 }, (_, i) => `pair-${String(i).padStart(3, "0")}`);
    expect(await listAll(a, { metadata: { shared: "yes" } })).toEqual(expected);
    expect(await listAll(b, { order: "desc" })).toEqual([...expected].reverse());
    await Promise.all([a.close?.(), b.close?.()]);
  });

  test("a page out of 2,000 stored completions fetches a page of records, not 2,000", async () => {
    const storage = await redisStorage();
    const ids = await fill(storage, 2000, 200);
    const mget = vi.spyOn(Redis.prototype, "mget");
    const ranges = vi.spyOn(Redis.prototype, "zrangebylex");
    try {
      for (const query of [{}, { after: ids[1500] }, { metadata: { bucket: "4" } }, { model: "kit/odd", metadata: { bucket: "3" }, after: ids[503] }]) {
        mget.mockClear();
        ranges.mockClear();
        const page = await storage.listCompletions({ owner: "default", limit: 20, order: "asc", ...query });
        expect(page!.data).toHaveLength(20);
        const fetched = mget.mock.calls.reduce((sum, [keys]) => sum + (keys as unknown as string[]).length, 0);
        expect(fetched).toBeGreaterThanOrEqual(20); // the spies do see the storage's calls
        expect(fetched).toBeLessThanOrEqual(21);
        expect(ranges.mock.calls.length).toBeGreaterThanOrEqual(1);
        expect(ranges.mock.calls.length).toBeLessThanOrEqual(2);
      }
    } finally {
      mget.mockRestore();
      ranges.mockRestore();
    }
    await storage.close?.();
  }, 60_000);

  test("records are JSON with string ids and a native expiry under a TTL", async () => {
    const prefix = freshPrefix();
    const storage = await redisStorage(prefix, 60_000);
    await storage.saveCompletion(sampleCompletion("123", { createdAt: Date.now(), metadata: { "7": "8" } }));
    expect(JSON.parse((await raw.get(`${prefix}:c:123`))!)).toMatchObject({ entry: { completion: { id: "123" }, metadata: { "7": "8" } } });
    const pttl = await raw.pttl(`${prefix}:c:123`);
    expect(pttl).toBeGreaterThan(50_000);
    expect(pttl).toBeLessThanOrEqual(60_000);
    expect(await raw.type(`${prefix}:i:all`)).toBe("zset");
    expect(await raw.type(`${prefix}:i:md:7=8`)).toBe("zset");
    await storage.updateMetadata("default", "123", { "7": "9" });
    expect(await raw.pttl(`${prefix}:c:123`)).toBeGreaterThan(50_000); // KEEPTTL
    expect(await raw.exists(`${prefix}:i:md:7=8`)).toBe(0); // the old pair's entry left with the update
    expect(await storage.deleteCompletion("default", "123")).toBe(true);
    expect(await raw.zcard(`${prefix}:i:all`)).toBe(0);
    await storage.close?.();
  });

  test("the owner `default` keeps the layout from before owners; another owner's keys sit under `o:<owner>:`", async () => {
    const prefix = freshPrefix();
    const storage = await redisStorage(prefix);
    await storage.saveCompletion(sampleCompletion("c1", { metadata: { k: "v" } }));
    await storage.saveCompletion(sampleCompletion("c1", { owner: "team:a%", metadata: { k: "v" } }));
    const keys: string[] = [];
    for (let cursor = "0"; ; ) {
      const [next, found] = await raw.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 100);
      keys.push(...found.map((key) => key.slice(prefix.length + 1)));
      if ((cursor = next) === "0") break;
    }
    keys.sort();
    expect(keys).toEqual(
      ["c:c1", "i:all", "i:m:alpha", "i:m:kit/alpha", "i:md:k=v", "o:team%3Aa%25:c:c1", "o:team%3Aa%25:i:all", "o:team%3Aa%25:i:m:alpha", "o:team%3Aa%25:i:m:kit/alpha", "o:team%3Aa%25:i:md:k=v"].sort(),
    );
    await storage.close?.();
  });

  test("a record written before owners existed is the owner `default`'s, and only its", async () => {
    const prefix = freshPrefix();
    const { owner: _, ...legacy } = sampleCompletion("old-1", { metadata: { k: "v" } });
    const orderKey = `${String(legacy.createdAt).padStart(15, "0")}0000000001abcd`;
    await raw.set(`${prefix}:c:old-1`, JSON.stringify({ v: 1, orderKey, entry: legacy }));
    for (const index of ["i:all", "i:m:kit/alpha", "i:md:k=v"]) await raw.zadd(`${prefix}:${index}`, 0, `${orderKey} old-1`);
    const storage = await redisStorage(prefix);
    expect(await storage.getCompletion("default", "old-1")).toEqual(sampleCompletion("old-1", { metadata: { k: "v" } }));
    expect(await listAll(storage, { metadata: { k: "v" } })).toEqual(["old-1"]);
    expect(await listAll(storage, { model: "kit/alpha" })).toEqual(["old-1"]);
    expect(await storage.getCompletion("some-app", "old-1")).toBeUndefined();
    expect(await storage.listCompletions({ owner: "some-app", limit: 10, order: "asc" })).toEqual({ data: [], hasMore: false });
    expect(await storage.deleteCompletion("default", "old-1")).toBe(true);
    expect(await raw.zcard(`${prefix}:i:all`)).toBe(0);
    await storage.close?.();
  });

  test("an unreachable Redis fails fast with the plugin's prefix", async () => {
    const storage = await setupStorage({ driver: "redis", url: "redis://127.0.0.1:1", prefix: freshPrefix() });
    const started = Date.now();
    await expect(storage.getCompletion("default", "x")).rejects.toThrow(/^\[storage:unstorage\] getCompletion failed/);
    expect(Date.now() - started).toBeLessThan(10_000);
    await storage.close?.();
  });
});

describe("storage-unstorage on a Redis that never answers", () => {
  let silent: SilentServer;
  beforeAll(async () => void (silent = await startSilentServer()));
  afterAll(() => silent.close());

  // A call that kept waiting instead would end in the test's own timeout.
  test("every call fails after command_timeout_ms with the plugin's prefix, instead of waiting for ever", async () => {
    const storage = await setupStorage({ driver: "redis", url: `redis://127.0.0.1:${silent.port}`, prefix: "never", command_timeout_ms: 200 });
    const calls: Array<[string, () => Promise<unknown>]> = [
      ["saveCompletion", () => storage.saveCompletion(sampleCompletion("x"))],
      ["getCompletion", () => storage.getCompletion("default", "x")],
      ["listCompletions", () => storage.listCompletions({ owner: "default", limit: 5, order: "asc" })],
      ["updateMetadata", () => storage.updateMetadata("app", "x", {})],
      ["deleteCompletion", () => storage.deleteCompletion("app", "x")],
      ["getImage", () => storage.getImage!("a".repeat(64))],
    ];
    const outcomes = await Promise.all(calls.map(async ([name, run]) => [name, await run().then(() => "answered", (error: Error) => error.message)] as const));
    for (const [name, outcome] of outcomes) expect(outcome, name).toMatch(new RegExp(`^\\[storage:unstorage\\] ${name} failed: .*timed out`, "i"));
    expect(silent.connections).toBeGreaterThan(0);
    await storage.close?.();
  }, 20_000);
});

testStorage({
  name: SUITE,
  plugin,
  skip,
  create: () => redisStorage(),
  ttl: { create: (ttlMs) => redisStorage(freshPrefix(), ttlMs) },
});
