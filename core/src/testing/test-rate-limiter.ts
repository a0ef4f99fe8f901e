/**
 * The rate-limiter conformance kit (docs/plugins.md, "Conformance kits"): the rules of the
 * `RateLimiter` contract, checked against a limiter with no router around it. Every case counts
 * under keys of its own, so a limiter on a shared store (Redis) needs no cleaning between cases. A
 * plugin's test is a few lines:
 *
 * @example
 * import { testRateLimiter } from "@modelmux/core/testing";
 * import { createMemoryLimiter } from "../src/index.ts";
 *
 * testRateLimiter({ name: "ratelimit-memory", create: async () => createMemoryLimiter() });
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { RateLimitDecision, RateLimiter, RateLimitRule } from "../plugin.ts";

export interface RateLimiterConformanceOptions {
  /** Shown in the describe block: `rate-limiter conformance: <name>`. */
  name: string;
  /** A limiter; called once per case. Keys never repeat across cases, so it may share a store. */
  create(): Promise<RateLimiter>;
  /** When set, every case is skipped and this says why (e.g. "Redis is not reachable"). */
  skip?: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let ids = 0;
const nextId = () => `kit-${process.pid}-${++ids}`;

/** Runs the battery against `create()`'s limiters. */
export function testRateLimiter({ name, create, skip }: RateLimiterConformanceOptions): void {
  describe.skipIf(skip !== undefined)(`rate-limiter conformance: ${name}`, () => {
    const open: RateLimiter[] = [];
    // Keys unique to this run and case: a shared Redis may hold an earlier run's counters.
    const run = randomBytes(4).toString("hex");
    let cases = 0;
    const keys = () => `kit:${run}:${++cases}`;
    const limiter = async () => {
      const made = await create();
      open.push(made);
      return made;
    };
    afterEach(async () => {
      await Promise.all(open.splice(0).map((l) => l.close?.()));
    });
    const acquire = (l: RateLimiter, rules: RateLimitRule[], reservedTokens = 0, id = nextId()) => l.acquire({ id, rules, reservedTokens });
    const reserveCost = (l: RateLimiter, rules: RateLimitRule[], reservedCost: number, id = nextId()) => l.acquire({ id, rules, reservedTokens: 0, reservedCost });
    const settleCost = (l: RateLimiter, rules: RateLimitRule[], id: string, reservedCost: number, usedCost: number) =>
      l.settle({ id, rules, reservedTokens: 0, reservedCost, usedTokens: 0, usedCost });

    it("is ready on a working store, when it has a `ready` hook (GET /readyz asks it)", async () => {
      await (await limiter()).ready?.();
    });

    it("admits `requests` requests in a window, then refuses with a retry inside the window", async () => {
      const l = await limiter();
      const rule = { key: `${keys()}:r`, requests: 3, windowMs: 60_000 };
      const decisions: RateLimitDecision[] = [];
      for (let i = 0; i < 4; i++) decisions.push(await acquire(l, [rule]));
      expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
      expect(decisions.map((d) => d.states[0]!.remainingRequests)).toEqual([2, 1, 0, 0]);
      expect(decisions[0]!.retryAfterMs).toBe(0);
      expect(decisions[3]!.retryAfterMs).toBeGreaterThan(55_000);
      expect(decisions[3]!.retryAfterMs).toBeLessThanOrEqual(60_000);
      expect(decisions[3]!.states[0]!.retryAfterMs).toBe(decisions[3]!.retryAfterMs);
      expect(decisions[0]!.states[0]!.resetRequestsMs).toBeGreaterThan(55_000);
      expect(decisions[0]!.states[0]!.resetRequestsMs).toBeLessThanOrEqual(60_000);
    });

    it("is all-or-nothing: a request refused by one rule is counted in none", async () => {
      const l = await limiter();
      const base = keys();
      const tight = { key: `${base}:tight`, requests: 1, windowMs: 60_000 };
      const loose = { key: `${base}:loose`, requests: 5, windowMs: 60_000 };
      expect((await acquire(l, [loose, tight])).allowed).toBe(true);
      const refused = await acquire(l, [loose, tight]);
      expect(refused.allowed).toBe(false);
      expect(refused.states.map((s) => s.retryAfterMs > 0)).toEqual([false, true]);
      // The refused request left `loose` at 1 counted: 4 remain before this one, 3 after.
      expect((await acquire(l, [loose])).states[0]!.remainingRequests).toBe(3);
    });

    it("keeps counters apart by key", async () => {
      const l = await limiter();
      const base = keys();
      expect((await acquire(l, [{ key: `${base}:a`, requests: 1, windowMs: 60_000 }])).allowed).toBe(true);
      expect((await acquire(l, [{ key: `${base}:b`, requests: 1, windowMs: 60_000 }])).allowed).toBe(true);
      expect((await acquire(l, [{ key: `${base}:a`, requests: 1, windowMs: 60_000 }])).allowed).toBe(false);
    });

    it("admits exactly `requests` of 200 concurrent requests", async () => {
      const l = await limiter();
      const rule = { key: `${keys()}:burst`, requests: 50, windowMs: 60_000 };
      const decisions = await Promise.all(Array.from({ length: 200 }, () => acquire(l, [rule])));
      expect(decisions.filter((d) => d.allowed)).toHaveLength(50);
    });

    it("admits again once the window has slid past the counted requests", async () => {
      const l = await limiter();
      const rule = { key: `${keys()}:slide`, requests: 2, windowMs: 400 };
      expect((await acquire(l, [rule])).allowed).toBe(true);
      expect((await acquire(l, [rule])).allowed).toBe(true);
      const refused = await acquire(l, [rule]);
      expect(refused.allowed).toBe(false);
      expect(refused.retryAfterMs).toBeLessThanOrEqual(400);
      await sleep(refused.retryAfterMs + 30);
      const again = await acquire(l, [rule]);
      expect(again.allowed).toBe(true);
    });

    it("holds reserved tokens until settle, then counts the used tokens instead", async () => {
      const l = await limiter();
      const rule = { key: `${keys()}:tok`, requests: 100, tokens: 100, windowMs: 60_000 };
      const first = await acquire(l, [rule], 60, "first");
      expect(first.allowed).toBe(true);
      expect(first.states[0]!.remainingTokens).toBe(40);
      expect(first.states[0]!.resetTokensMs).toBeGreaterThan(55_000);
      const second = await acquire(l, [rule], 60);
      expect(second.allowed).toBe(false);
      expect(second.retryAfterMs).toBeGreaterThan(0);
      expect(second.states[0]!.remainingRequests).toBe(99);
      await l.settle({ id: "first", rules: [rule], reservedTokens: 60, usedTokens: 10 });
      const third = await acquire(l, [rule], 60);
      expect(third.allowed).toBe(true);
      expect(third.states[0]!.remainingTokens).toBe(30);
    });

    it("refuses a request with nothing reserved once the used tokens reach the limit", async () => {
      const l = await limiter();
      const rule = { key: `${keys()}:spent`, requests: 100, tokens: 50, windowMs: 60_000 };
      expect((await acquire(l, [rule], 0, "a")).allowed).toBe(true);
      await l.settle({ id: "a", rules: [rule], reservedTokens: 0, usedTokens: 49 });
      expect((await acquire(l, [rule], 0, "b")).allowed).toBe(true);
      await l.settle({ id: "b", rules: [rule], reservedTokens: 0, usedTokens: 5 });
      const refused = await acquire(l, [rule]);
      expect(refused.allowed).toBe(false);
      expect(refused.states[0]!.remainingTokens).toBe(0);
    });

    it("releases a reservation settled with no usage", async () => {
      const l = await limiter();
      const rule = { key: `${keys()}:release`, requests: 100, tokens: 100, windowMs: 60_000 };
      expect((await acquire(l, [rule], 100, "held")).allowed).toBe(true);
      expect((await acquire(l, [rule], 1)).allowed).toBe(false);
      await l.settle({ id: "held", rules: [rule], reservedTokens: 100, usedTokens: 0 });
      expect((await acquire(l, [rule], 100)).allowed).toBe(true);
    });

    it("lets used tokens slide out of the window too", async () => {
      const l = await limiter();
      const rule = { key: `${keys()}:tokslide`, requests: 100, tokens: 10, windowMs: 400 };
      expect((await acquire(l, [rule], 0, "x")).allowed).toBe(true);
      await l.settle({ id: "x", rules: [rule], reservedTokens: 0, usedTokens: 10 });
      const refused = await acquire(l, [rule]);
      expect(refused.allowed).toBe(false);
      await sleep(refused.retryAfterMs + 30);
      expect((await acquire(l, [rule])).allowed).toBe(true);
    });

    it("holds reserved cost until settle, then counts the cost used instead", async () => {
      const l = await limiter();
      const rule = { key: `${keys()}:cost`, requests: 100, cost: 1, windowMs: 60_000 };
      const first = await reserveCost(l, [rule], 0.6, "first");
      expect(first.allowed).toBe(true);
      expect(first.states[0]!.remainingCost).toBeCloseTo(0.4, 9);
      expect(first.states[0]!.countedCost).toBeCloseTo(0.6, 9);
      expect(first.states[0]!.resetCostMs).toBeGreaterThan(55_000);
      expect(first.states[0]!.resetCostMs).toBeLessThanOrEqual(60_000);
      expect(first.states[0]!.remainingTokens).toBeUndefined();
      const second = await reserveCost(l, [rule], 0.6);
      expect(second.allowed).toBe(false);
      expect(second.retryAfterMs).toBeGreaterThan(55_000);
      expect(second.states[0]!.remainingRequests).toBe(99);
      await settleCost(l, [rule], "first", 0.6, 0.1);
      const third = await reserveCost(l, [rule], 0.6);
      expect(third.allowed).toBe(true);
      expect(third.states[0]!.remainingCost).toBeCloseTo(0.3, 9);
    });

    it("counts cost exactly: a hundred amounts of $0.10 spend a $10 budget to the unit", async () => {
      const l = await limiter();
      const rule = { key: `${keys()}:exact`, requests: 1000, cost: 10, windowMs: 60_000 };
      // 200 at once, each reserving $0.10: exactly 100 fit, and nothing is left over.
      const decisions = await Promise.all(Array.from({ length: 200 }, (_, i) => reserveCost(l, [rule], 0.1, `exact-${i}`)));
      const admitted = decisions.flatMap((d, i) => (d.allowed ? [i] : []));
      expect(admitted).toHaveLength(100);
      await Promise.all(admitted.map((i) => settleCost(l, [rule], `exact-${i}`, 0.1, 0.1)));
      // Adding 0.1 a hundred times in floats gives 9.99999999999998: the limiter's units do not drift.
      const spent = await reserveCost(l, [rule], 0);
      expect(spent.allowed).toBe(false);
      expect(spent.states[0]!.remainingCost).toBe(0);
      expect(spent.states[0]!.countedCost).toBe(10);
    });

    it("refuses a request with nothing reserved once the cost spent reaches the budget", async () => {
      const l = await limiter();
      const rule = { key: `${keys()}:spentcost`, requests: 100, cost: 0.5, windowMs: 60_000 };
      expect((await reserveCost(l, [rule], 0, "a")).allowed).toBe(true);
      await settleCost(l, [rule], "a", 0, 0.499_999_999);
      // One nano-dollar is left: a request reserving nothing still passes, then its cost spends the budget.
      const last = await reserveCost(l, [rule], 0, "b");
      expect(last.allowed).toBe(true);
      expect(last.states[0]!.remainingCost).toBeCloseTo(0.000_000_001, 12);
      await settleCost(l, [rule], "b", 0, 0.02);
      const refused = await reserveCost(l, [rule], 0);
      expect(refused.allowed).toBe(false);
      expect(refused.states[0]!.remainingCost).toBe(0);
      expect(refused.states[0]!.countedCost).toBeCloseTo(0.519_999_999, 9);
    });

    it("releases a cost reservation settled with no cost, and keeps tokens and cost apart", async () => {
      const l = await limiter();
      const rule = { key: `${keys()}:costrelease`, requests: 100, tokens: 1000, cost: 2, windowMs: 60_000 };
      const held = await l.acquire({ id: "held", rules: [rule], reservedTokens: 100, reservedCost: 2 });
      expect(held.allowed).toBe(true);
      expect(held.states[0]).toMatchObject({ remainingTokens: 900, remainingCost: 0 });
      expect((await reserveCost(l, [rule], 0.01)).allowed).toBe(false);
      await l.settle({ id: "held", rules: [rule], reservedTokens: 100, reservedCost: 2, usedTokens: 40, usedCost: 0 });
      const after = await l.acquire({ id: nextId(), rules: [rule], reservedTokens: 0, reservedCost: 2 });
      expect(after.allowed).toBe(true);
      expect(after.states[0]).toMatchObject({ remainingTokens: 960, remainingCost: 0 });
    });

    it("ignores cost in a rule without a budget, and a budget in a request that reserves none", async () => {
      const l = await limiter();
      const base = keys();
      const plain = { key: `${base}:plain`, requests: 2, windowMs: 60_000 };
      const budget = { key: `${base}:budget`, requests: 100, cost: 0.001, windowMs: 60_000 };
      const decision = await reserveCost(l, [plain, budget], 0, "free");
      expect(decision.allowed).toBe(true);
      expect(decision.states[0]!.remainingCost).toBeUndefined();
      expect(decision.states[1]!.remainingCost).toBeCloseTo(0.001, 12);
      await settleCost(l, [plain, budget], "free", 0, 0);
      expect((await reserveCost(l, [plain], 5)).allowed).toBe(true);
    });

    it("keeps no count of requests for a rule without `requests`: a budget alone", async () => {
      const l = await limiter();
      const base = keys();
      const budget = { key: `${base}:only-cost`, cost: 1, windowMs: 60_000 };
      const both = { key: `${base}:with-requests`, requests: 3, windowMs: 60_000 };
      const decisions = [];
      for (let i = 0; i < 5; i++) decisions.push(await reserveCost(l, [budget], 0.1, `alone-${i}`));
      expect(decisions.every((d) => d.allowed)).toBe(true);
      expect(decisions[4]!.states[0]!.remainingRequests).toBeUndefined();
      expect(decisions[4]!.states[0]!.resetRequestsMs).toBeUndefined();
      expect(decisions[4]!.states[0]!.remainingCost).toBeCloseTo(0.5, 9);
      const mixed = await reserveCost(l, [budget, both], 0.1);
      expect(mixed.states.map((s) => s.remainingRequests)).toEqual([undefined, 2]);
    });

    it("lets cost slide out of the window too", async () => {
      const l = await limiter();
      const rule = { key: `${keys()}:costslide`, requests: 100, cost: 1, windowMs: 400 };
      expect((await reserveCost(l, [rule], 0, "x")).allowed).toBe(true);
      await settleCost(l, [rule], "x", 0, 1);
      const refused = await reserveCost(l, [rule], 0);
      expect(refused.allowed).toBe(false);
      expect(refused.retryAfterMs).toBeLessThanOrEqual(400);
      await sleep(refused.retryAfterMs + 30);
      expect((await reserveCost(l, [rule], 0.5)).allowed).toBe(true);
    });

    it("takes a settle of an unknown or repeated id without failing", async () => {
      const l = await limiter();
      const rule = { key: `${keys()}:unknown`, requests: 5, tokens: 100, windowMs: 60_000 };
      await expect(l.settle({ id: "never-acquired", rules: [rule], reservedTokens: 10, usedTokens: 0 })).resolves.toBeUndefined();
      expect((await acquire(l, [rule], 10, "twice")).allowed).toBe(true);
      await l.settle({ id: "twice", rules: [rule], reservedTokens: 10, usedTokens: 0 });
      await l.settle({ id: "twice", rules: [rule], reservedTokens: 10, usedTokens: 0 });
      expect((await acquire(l, [rule], 100)).allowed).toBe(true);
    });
  });
}
