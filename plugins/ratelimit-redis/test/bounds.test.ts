/**
 * What a rule keeps in Redis does not grow with traffic: its amounts are a hash of at most a hundred
 * buckets (README "Budgets"), and reservations are kept only until settle. Uses REDIS_URL (skipped
 * with a message when unreachable, failed under CI=true).
 */
import { createLogger } from "@modelmux/core";
import { Redis } from "ioredis";
import { afterAll, describe, expect, test } from "vitest";
import { deletePrefix, REDIS_URL, redisGate } from "../../storage-unstorage/test/redis-gate.ts";
import { createRedisLimiter } from "../src/index.ts";

const { skip } = await redisGate("ratelimit-redis bounds");
const prefix = `modelmux-test:${process.pid}-rl-bounds`;
afterAll(async () => {
  if (skip === undefined) await deletePrefix(prefix);
});

/** Acquires and settles `total` requests of `rule`, `batch` at a time. */
async function spend(limiter: Awaited<ReturnType<typeof createRedisLimiter>>, rule: { key: string; cost: number; windowMs: number }, total: number, batch: number) {
  for (let done = 0; done < total; done += batch) {
    await Promise.all(
      Array.from({ length: batch }, async (_, i) => {
        const id = `r${done + i}`;
        const decision = await limiter.acquire({ id, rules: [rule], reservedTokens: 0, reservedCost: 0.001 });
        expect(decision.allowed).toBe(true);
        await limiter.settle({ id, rules: [rule], reservedTokens: 0, reservedCost: 0.001, usedTokens: 0, usedCost: 0.0002 });
      }),
    );
  }
}

/** Everything kept under rule key `key`: the members, fields or values of each of its keys, whatever their names and types. */
async function held(key: string): Promise<number> {
  const raw = new Redis(REDIS_URL);
  let total = 0;
  let cursor = "0";
  for (let i = 0; i < 1_000; i++) {
    const [next, keys] = await raw.scan(cursor, "MATCH", `${key}:*`, "COUNT", 100);
    for (const k of keys) {
      const type = await raw.type(k);
      total += type === "hash" ? await raw.hlen(k) : type === "zset" ? await raw.zcard(k) : 1;
    }
    cursor = next;
    if (cursor === "0") break;
  }
  raw.disconnect();
  return total;
}

describe.skipIf(skip !== undefined)("ratelimit-redis bounds", () => {
  test("a cost-only 30-day budget keeps one small hash after 200,000 settled requests, and their exact sum", async () => {
    const limiter = await createRedisLimiter({ url: REDIS_URL, prefix: `${prefix}:month:` }, createLogger({ level: "silent" }));
    const budget = { key: "app:busy", cost: 50, windowMs: 30 * 86_400_000 };
    await spend(limiter, budget, 200_000, 1_000);
    const after = await limiter.acquire({ id: "after", rules: [budget], reservedTokens: 0, reservedCost: 0 });
    expect(after.states[0]!.countedCost).toBe(40);
    // The run takes seconds of a 7.2-hour bucket: one field, or two across a bucket's edge; no
    // reservation is left, and no log of requests is kept for a rule without `requests`.
    expect(await held(`${prefix}:month:app:busy`)).toBeLessThanOrEqual(2);
    await limiter.close?.();
  }, 120_000);

  test("a short window's buckets leave as it slides: at most a hundred fields however many requests", async () => {
    const limiter = await createRedisLimiter({ url: REDIS_URL, prefix: `${prefix}:slide:` }, createLogger({ level: "silent" }));
    // Buckets of 3 ms: 20,000 requests span many windows.
    const budget = { key: "app:fast", cost: 1_000, windowMs: 300 };
    await spend(limiter, budget, 20_000, 200);
    // A decision drops the buckets that left the window.
    await limiter.acquire({ id: "after", rules: [budget], reservedTokens: 0, reservedCost: 0 });
    const raw = new Redis(REDIS_URL);
    const [fields, reservations] = await Promise.all([raw.hlen(`${prefix}:slide:app:fast:cb`), raw.zcard(`${prefix}:slide:app:fast:q`)]);
    raw.disconnect();
    expect(fields).toBeLessThanOrEqual(100);
    expect(reservations).toBe(0);
    await limiter.close?.();
  }, 60_000);
});
