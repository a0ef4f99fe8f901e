/**
 * What a counter holds does not grow with traffic: a 30-day budget sums its amounts in a hundred
 * buckets (README "Budgets"), however many requests it counts. Time is the limiter's `now`, moved
 * by hand: no test waits.
 */
import { describe, expect, test } from "vitest";
import { createMemoryLimiter } from "../src/index.ts";

const DAY = 86_400_000;

describe("ratelimit-memory bounds", () => {
  test("a cost-only 30-day budget holds at most a hundred buckets after 200,000 settled requests", async () => {
    let at = 1_800_000_000_000;
    const limiter = createMemoryLimiter({}, () => at);
    const budget = { key: "app:busy", cost: 50, windowMs: 30 * DAY };
    // 200,000 requests 20 s apart: 46 days, so the window slides over more than its length.
    for (let i = 0; i < 200_000; i++) {
      const id = `r${i}`;
      const decision = await limiter.acquire({ id, rules: [budget], reservedTokens: 0, reservedCost: 0.001 });
      expect(decision.allowed).toBe(true);
      await limiter.settle({ id, rules: [budget], reservedTokens: 0, reservedCost: 0.001, usedTokens: 0, usedCost: 0.0002 });
      at += 20_000;
    }
    expect(limiter.entries("app:busy")).toBeLessThanOrEqual(100);
    // 129,600 requests fit in 30 days: the window counts between 99 and 100 buckets of 1,296 each.
    const last = await limiter.acquire({ id: "last", rules: [budget], reservedTokens: 0, reservedCost: 0 });
    expect(last.states[0]!.countedCost).toBeGreaterThan(0.0002 * 1_296 * 99 - 1e-9);
    expect(last.states[0]!.countedCost).toBeLessThanOrEqual(0.0002 * 129_600 + 1e-9);
    limiter.close?.();
  });

  test("an amount leaves the window with its bucket, and the reset says when", async () => {
    let at = 1_800_000_000_000;
    const limiter = createMemoryLimiter({}, () => at);
    // Buckets of 36 s for a 1-hour window.
    const budget = { key: "app:hour", tokens: 100, windowMs: 3_600_000 };
    await limiter.acquire({ id: "a", rules: [budget], reservedTokens: 0 });
    await limiter.settle({ id: "a", rules: [budget], reservedTokens: 0, usedTokens: 100 });
    at += 10_000;
    const full = await limiter.acquire({ id: "b", rules: [budget], reservedTokens: 0 });
    expect(full.allowed).toBe(false);
    expect(full.retryAfterMs).toBe(3_600_000 - 10_000);
    expect(full.states[0]!.resetTokensMs).toBe(3_600_000 - 10_000);
    at += full.retryAfterMs;
    expect((await limiter.acquire({ id: "c", rules: [budget], reservedTokens: 0 })).allowed).toBe(true);
    expect(limiter.entries("app:hour")).toBe(0);
    limiter.close?.();
  });

  test("an unsettled reservation is forgotten when its bucket leaves the window", async () => {
    let at = 1_800_000_000_000;
    const limiter = createMemoryLimiter({}, () => at);
    const budget = { key: "app:lapsed", cost: 1, windowMs: 60_000 };
    await limiter.acquire({ id: "lost", rules: [budget], reservedTokens: 0, reservedCost: 0.5 });
    expect(limiter.entries("app:lapsed")).toBe(2);
    at += 60_000;
    expect((await limiter.acquire({ id: "next", rules: [budget], reservedTokens: 0, reservedCost: 1 })).allowed).toBe(true);
    expect(limiter.entries("app:lapsed")).toBe(2);
    // A settle of the lapsed id takes nothing away from the bucket "next" reserved in.
    await limiter.settle({ id: "lost", rules: [budget], reservedTokens: 0, reservedCost: 0.5, usedTokens: 0, usedCost: 0 });
    expect((await limiter.acquire({ id: "after", rules: [budget], reservedTokens: 0, reservedCost: 0 })).states[0]!.countedCost).toBe(1);
    limiter.close?.();
  });

  test("a changed window (a config reload) keeps what was counted, in buckets of the new width", async () => {
    let at = 1_800_000_000_000;
    const limiter = createMemoryLimiter({}, () => at);
    const day = { key: "app:reloaded", cost: 1, windowMs: DAY };
    await limiter.acquire({ id: "a", rules: [day], reservedTokens: 0, reservedCost: 0.5 });
    at += 60_000;
    const month = { ...day, windowMs: 30 * DAY };
    await limiter.settle({ id: "a", rules: [month], reservedTokens: 0, reservedCost: 0.5, usedTokens: 0, usedCost: 0.25 });
    const after = await limiter.acquire({ id: "b", rules: [month], reservedTokens: 0, reservedCost: 0 });
    expect(after.states[0]!.countedCost).toBe(0.25);
    expect(after.states[0]!.resetCostMs).toBeGreaterThan(30 * DAY - DAY / 2);
    limiter.close?.();
  });
});
