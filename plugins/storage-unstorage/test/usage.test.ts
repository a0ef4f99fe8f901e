/**
 * Usage counters on each driver, beyond the conformance kit (which every driver's file runs): on
 * Redis, two storages on one prefix (two routers) add up exactly, in one hash per day with integer
 * fields and an expiry 400 days after the day; on fs, the counters outlive a restart, one file per
 * day, and days past the retention are removed.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import type { UsageDelta } from "@modelmux/core";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { setupStorage } from "./helpers.ts";
import { deletePrefix, REDIS_URL, redisGate } from "./redis-gate.ts";

const { skip } = await redisGate("storage-unstorage usage counters (redis)");
const RUN = `modelmux-test:${process.pid}-${randomBytes(3).toString("hex")}-usage`;
const DAY_MS = 86_400_000;
const day = (back: number) => new Date(Date.now() - back * DAY_MS).toISOString().slice(0, 10);
const delta = (hour: string, fields: Partial<UsageDelta> = {}): UsageDelta => ({
  hour, app: "app", developer: "dev", model: "p/m", requests: 1, errors: 0, inputTokens: 10, outputTokens: 2, costNanoUsd: 30, ...fields,
});

const dirs: string[] = [];
afterAll(async () => {
  dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true }));
  if (skip === undefined) await deletePrefix(RUN);
});

describe.skipIf(skip !== undefined)("usage counters on redis", () => {
  let raw: Redis;
  beforeAll(() => void (raw = new Redis(REDIS_URL)));
  afterAll(() => raw.disconnect());

  test("two storages on one prefix adding at once lose no increment", async () => {
    const prefix = `${RUN}:shared`;
    const [a, b] = await Promise.all([setupStorage({ driver: "redis", url: REDIS_URL, prefix }), setupStorage({ driver: "redis", url: REDIS_URL, prefix })]);
    const hour = `${day(1)}T10`;
    await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).addUsage!([delta(hour, { app: `app-${i % 3}` }), delta(hour)])));
    for (const storage of [a, b]) {
      const rows = await storage.readUsage!({ firstDay: day(1), lastDay: day(1) });
      const requests = Object.fromEntries(rows.map((row) => [row.app, row.requests]));
      expect(requests).toEqual({ app: 100, "app-0": 34, "app-1": 33, "app-2": 33 });
      expect(rows.find((row) => row.app === "app")).toMatchObject({ inputTokens: 1000, outputTokens: 200, costNanoUsd: 3000 });
    }
    await Promise.all([a.close?.(), b.close?.()]);
  });

  test("a day is one hash of integer fields per hour, labels and counter, expiring 400 days after the day", async () => {
    const prefix = `${RUN}:layout`;
    const storage = await setupStorage({ driver: "redis", url: REDIS_URL, prefix });
    await storage.addUsage!([delta(`${day(2)}T07`, { app: "a|b", errors: 1 })]);
    const key = `${prefix}:usage:${day(2)}`;
    expect(await raw.hgetall(key)).toEqual({ "07|a%7Cb|dev|p/m|r": "1", "07|a%7Cb|dev|p/m|e": "1", "07|a%7Cb|dev|p/m|i": "10", "07|a%7Cb|dev|p/m|o": "2", "07|a%7Cb|dev|p/m|c": "30" });
    const expiresAt = Date.parse(`${day(2)}T00:00:00Z`) + 400 * DAY_MS;
    // PTTL, not PEXPIRETIME (Redis 7 only); the minute of slack is for the two clocks, not speed.
    expect(Math.abs(Date.now() + (await raw.pttl(key)) - expiresAt)).toBeLessThan(60_000);
    await storage.close?.();
  });
});

describe("usage counters on fs", () => {
  const freshDir = () => {
    const dir = mkdtempSync(join(tmpdir(), "modelmux-usage-"));
    dirs.push(dir);
    return dir;
  };

  test("outlive a restart, one file per day", async () => {
    const base = freshDir();
    const before = await setupStorage({ driver: "fs", base });
    await before.addUsage!([delta(`${day(1)}T23`), delta(`${day(0)}T00`)]);
    await before.close?.();
    expect(readdirSync(join(base, "modelmux", "usage")).sort()).toEqual([day(1), day(0)]);
    const after = await setupStorage({ driver: "fs", base });
    await after.addUsage!([delta(`${day(0)}T00`, { requests: 2 })]);
    expect(await after.readUsage!({ firstDay: day(1), lastDay: day(0) })).toEqual([delta(`${day(1)}T23`), { ...delta(`${day(0)}T00`), requests: 3, inputTokens: 20, outputTokens: 4, costNanoUsd: 60 }]);
    await after.close?.();
  });

  test("drop days past the retention, and take none", async () => {
    const base = freshDir();
    const folder = join(base, "modelmux", "usage");
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, day(401)), JSON.stringify({ v: 1, rows: [["01", "app", "dev", "p/m", 1, 0, 0, 0, 0]] }));
    writeFileSync(join(folder, day(399)), JSON.stringify({ v: 1, rows: [["01", "app", "dev", "p/m", 1, 0, 0, 0, 0]] }));
    const storage = await setupStorage({ driver: "fs", base });
    await storage.addUsage!([delta(`${day(0)}T01`), delta(`${day(500)}T01`)]);
    await storage.close?.(); // waits for the sweep
    expect(existsSync(join(folder, day(401)))).toBe(false);
    expect(readdirSync(folder).sort()).toEqual([day(399), day(0)]);
  });
});
