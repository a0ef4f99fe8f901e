/**
 * The latest rate-limit counters per rule key (core/src/rate-limit/latest-states.ts): each
 * decision's states kept by their rules' keys, the latest winning, the most recently seen listed
 * first, and at most `max` keys, the longest unseen dropped.
 */
import { describe, expect, it } from "vitest";
import type { RateLimitRuleState } from "../src/plugins/rate-limit-contract.ts";
import { LatestRateLimitStates } from "../src/rate-limit/latest-states.ts";
import type { ScopedRule } from "../src/rate-limit/policy.ts";

const rule = (scope: ScopedRule["scope"], name: string): ScopedRule => ({ key: `${scope}:${name}`, scope, name, requests: 10, windowMs: 60_000 });
const state = (remainingRequests: number): RateLimitRuleState => ({ remainingRequests, resetRequestsMs: 1000, retryAfterMs: 0 });

describe("LatestRateLimitStates", () => {
  it("keeps each rule key's latest state, most recently seen first", () => {
    const clock = { now: 1_000 };
    const latest = new LatestRateLimitStates(10, () => clock.now);
    latest.record([rule("app", "web"), rule("provider", "openai")], [state(9), state(99)]);
    clock.now = 2_000;
    latest.record([rule("app", "batch"), rule("provider", "openai")], [state(4), state(98)]);
    latest.record([rule("app", "ignored")], []);
    expect(latest.list().map(({ rule, state, at }) => [rule.key, state.remainingRequests, at])).toEqual([
      ["provider:openai", 98, 2_000],
      ["app:batch", 4, 2_000],
      ["app:web", 9, 1_000],
    ]);
  });

  it("keeps at most `max` keys, dropping the longest unseen", () => {
    const latest = new LatestRateLimitStates(2);
    latest.record([rule("app", "a")], [state(1)]);
    latest.record([rule("app", "b")], [state(1)]);
    latest.record([rule("app", "a")], [state(0)]);
    latest.record([rule("app", "c")], [state(1)]);
    expect(latest.list().map(({ rule }) => rule.key)).toEqual(["app:c", "app:a"]);
  });
});
