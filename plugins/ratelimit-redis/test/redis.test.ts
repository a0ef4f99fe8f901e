/**
 * What only the Redis limiter has: several limiters sharing one Redis, keys that expire, and the
 * failure policy when Redis is unreachable or stalls (never a hang).
 */
import { createLogger } from "@modelmux/core";
import { startSilentServer } from "@modelmux/core/testing";
import { Redis } from "ioredis";
import { afterAll, describe, expect, test } from "vitest";
import { deletePrefix, REDIS_URL, redisGate } from "../../storage-unstorage/test/redis-gate.ts";
import { createRedisLimiter, type RedisLimiterOptions } from "../src/index.ts";

const { skip } = await redisGate("ratelimit-redis");
const prefix = `modelmux-test:${process.pid}-rl`;
afterAll(async () => {
  if (skip === undefined) await deletePrefix(prefix);
});

/** A logger whose lines are kept, to check what an outage logs. */
function recordingLogger() {
  const lines: string[] = [];
  return { logger: createLogger({ level: "debug", format: "json", write: (text) => lines.push(...text.trim().split("\n")) }), lines };
}

const rule = (key: string, requests = 1, tokens?: number) => ({ key, requests, windowMs: 60_000, ...(tokens !== undefined && { tokens }) });

describe.skipIf(skip !== undefined)("ratelimit-redis on a shared Redis", () => {
  test("two limiters on one Redis admit exactly 50 of 200 concurrent requests against a limit of 50", async () => {
    const options = { url: REDIS_URL, prefix: `${prefix}:shared:` };
    const [a, b] = await Promise.all([createRedisLimiter(options, createLogger({ level: "silent" })), createRedisLimiter(options, createLogger({ level: "silent" }))]);
    const limit = rule("developer:alice", 50);
    const decisions = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).acquire({ id: `r${i}`, rules: [limit], reservedTokens: 0 })));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(50);
    await Promise.all([a.close?.(), b.close?.()]);
  });

  test("two limiters on one Redis spend one budget exactly: 100 of 200 concurrent $0.07 reservations fit $7", async () => {
    const options = { url: REDIS_URL, prefix: `${prefix}:budget:` };
    const [a, b] = await Promise.all([createRedisLimiter(options, createLogger({ level: "silent" })), createRedisLimiter(options, createLogger({ level: "silent" }))]);
    const budget = { key: "app:spender", requests: 1000, cost: 7, windowMs: 60_000 };
    const acquire = (i: number) => (i % 2 ? a : b).acquire({ id: `b${i}`, rules: [budget], reservedTokens: 0, reservedCost: 0.07 });
    const decisions = await Promise.all(Array.from({ length: 200 }, (_, i) => acquire(i)));
    const admitted = decisions.flatMap((d, i) => (d.allowed ? [i] : []));
    expect(admitted).toHaveLength(100);
    // Each settles on the other router, with a real cost a little under its reservation.
    await Promise.all(admitted.map((i) => (i % 2 ? b : a).settle({ id: `b${i}`, rules: [budget], reservedTokens: 0, reservedCost: 0.07, usedTokens: 0, usedCost: 0.069 })));
    const after = await a.acquire({ id: "b-after", rules: [budget], reservedTokens: 0, reservedCost: 0 });
    expect(after.states[0]!.countedCost).toBe(6.9);
    expect(after.states[0]!.remainingCost).toBe(0.1);
    await Promise.all([a.close?.(), b.close?.()]);
  });

  test("keeps amounts of a million dollars whole, and frees them exactly as they leave the window", async () => {
    const limiter = await createRedisLimiter({ url: REDIS_URL, prefix: `${prefix}:large:` }, createLogger({ level: "silent" }));
    const budget = { key: "provider:big", requests: 100, cost: 5_000_000, windowMs: 400 };
    const held = await limiter.acquire({ id: "l1", rules: [budget], reservedTokens: 0, reservedCost: 1_000_000 });
    expect(held.states[0]!.remainingCost).toBe(4_000_000);
    await limiter.settle({ id: "l1", rules: [budget], reservedTokens: 0, reservedCost: 1_000_000, usedTokens: 0, usedCost: 1_234_567.123456789 });
    const spent = await limiter.acquire({ id: "l2", rules: [budget], reservedTokens: 0, reservedCost: 0 });
    expect(spent.states[0]!.countedCost).toBe(1_234_567.123456789);
    await new Promise((resolve) => setTimeout(resolve, 450));
    const later = await limiter.acquire({ id: "l3", rules: [budget], reservedTokens: 0, reservedCost: 0 });
    expect(later.states[0]).toMatchObject({ remainingCost: 5_000_000, countedCost: 0 });
    await limiter.close?.();
  });

  test("a changed window (a config reload) keeps what was counted, and takes a reservation out of its bucket", async () => {
    const limiter = await createRedisLimiter({ url: REDIS_URL, prefix: `${prefix}:reload:` }, createLogger({ level: "silent" }));
    const minute = { key: "app:reloaded", cost: 1, windowMs: 60_000 };
    await limiter.acquire({ id: "a", rules: [minute], reservedTokens: 0, reservedCost: 0.5 });
    await limiter.acquire({ id: "b", rules: [minute], reservedTokens: 0, reservedCost: 0.25 });
    const day = { ...minute, windowMs: 86_400_000 };
    await limiter.settle({ id: "a", rules: [day], reservedTokens: 0, reservedCost: 0.5, usedTokens: 0, usedCost: 0.125 });
    const after = await limiter.acquire({ id: "c", rules: [day], reservedTokens: 0, reservedCost: 0 });
    expect(after.states[0]!.countedCost).toBe(0.375);
    await limiter.close?.();
  });

  test("every key expires one window after its last write", async () => {
    const limiter = await createRedisLimiter({ url: REDIS_URL, prefix: `${prefix}:ttl:` }, createLogger({ level: "silent" }));
    await limiter.acquire({ id: "x", rules: [{ key: "app:ttl", requests: 5, tokens: 100, cost: 1, windowMs: 5_000 }], reservedTokens: 10, reservedCost: 0.5 });
    const raw = new Redis(REDIS_URL);
    const ttls = await Promise.all(["r", "tb", "cb", "q"].map((k) => raw.pttl(`${prefix}:ttl:app:ttl:${k}`)));
    raw.disconnect();
    for (const ttl of ttls) {
      expect(ttl).toBeGreaterThan(4_000);
      expect(ttl).toBeLessThanOrEqual(5_000);
    }
    await limiter.close?.();
  });
});

describe("ratelimit-redis when Redis is unreachable", () => {
  // Port 1 on loopback: nothing listens, the connection is refused at once.
  const down: RedisLimiterOptions = { url: "redis://127.0.0.1:1", prefix: `${prefix}:down:`, connect_timeout_ms: 200 };

  test("on_error: open admits uncounted, logs the outage once, and names no password", async () => {
    const { logger, lines } = recordingLogger();
    const limiter = await createRedisLimiter({ ...down, url: "redis://:hunter2-secret@127.0.0.1:1" }, logger);
    const decisions = await Promise.all([1, 2, 3].map((i) => limiter.acquire({ id: `o${i}`, rules: [rule("app:x")], reservedTokens: 0 })));
    expect(decisions).toEqual(Array(3).fill({ allowed: true, retryAfterMs: 0, states: [], unavailable: true }));
    await limiter.settle({ id: "o1", rules: [rule("app:x", 1, 10)], reservedTokens: 5, usedTokens: 3 });
    logger.flush();
    const warnings = lines.filter((line) => line.includes('"level":"warn"'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/127\.0\.0\.1:1 is unreachable .*requests are admitted uncounted \(on_error: open\)/);
    expect(lines.join("\n")).not.toContain("hunter2-secret");
    await limiter.close?.();
  });

  test("on_error: closed refuses with a retry", async () => {
    const limiter = await createRedisLimiter({ ...down, on_error: "closed" }, createLogger({ level: "silent" }));
    const decision = await limiter.acquire({ id: "c", rules: [rule("app:x")], reservedTokens: 0 });
    expect(decision).toEqual({ allowed: false, retryAfterMs: 1000, states: [], unavailable: true });
    await limiter.close?.();
  });

  test("a Redis that accepts connections but never answers costs at most the timeouts, not a hang", async () => {
    const silent = await startSilentServer();
    const started = performance.now();
    const limiter = await createRedisLimiter({ url: `redis://127.0.0.1:${silent.port}`, prefix: `${prefix}:stall:`, connect_timeout_ms: 300, command_timeout_ms: 100 }, createLogger({ level: "silent" }));
    const decision = await limiter.acquire({ id: "s", rules: [rule("app:x")], reservedTokens: 0 });
    expect(decision).toMatchObject({ allowed: true, unavailable: true });
    expect(performance.now() - started).toBeLessThan(2_000);
    const next = performance.now();
    await limiter.acquire({ id: "s2", rules: [rule("app:x")], reservedTokens: 0 });
    expect(performance.now() - next).toBeLessThan(300);
    await limiter.close?.();
    await silent.close();
  });
});
