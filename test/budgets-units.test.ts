/**
 * The pure parts of budgets (README, "Budgets"): USD in whole nano-dollars, the reservation of a
 * request, the `-cost` headers, and the amounts and durations a refusal names.
 */
import { describe, expect, it } from "vitest";
import { costUnits } from "@modelmux/core";
import { costReservation, DEFAULT_RESERVED_OUTPUT_TOKENS } from "../core/src/rate-limit/cost-reservation.ts";
import { rateLimitHeaders, usdHeader } from "../core/src/rate-limit/headers.ts";
import { formatDuration, formatUsd } from "../core/src/rate-limit/refusal.ts";

describe("costUnits", () => {
  it.each([
    [50, 50_000_000_000],
    [0.067, 67_000_000], // 0.067 × 1e9 is 67000000.00000001 in floats: the same unit, not the next
    [1.005, 1_005_000_000], // and 1004999999.9999999 rounds to its unit too
    [0.0000000011, 2], // a real fraction of a unit is rounded up
    [1e-15, 1], // anything more than nothing counts
    [1_234_567.123456789, 1_234_567_123_456_789],
    [0, 0],
    [-1, 0],
    [Number.NaN, 0],
  ])("$%d is %d nano-dollars", (usd, units) => expect(costUnits(usd)).toBe(units));

  it("adds up exactly where floats drift", () => {
    let floats = 0;
    let units = 0;
    for (let i = 0; i < 100; i++) {
      floats += 0.1;
      units += costUnits(0.1);
    }
    expect(floats).not.toBe(10);
    expect(units).toBe(costUnits(10));
  });
});

describe("costReservation", () => {
  const price = { input: 2, output: 8 };
  it("is the body's bytes / 4 at the input price plus the reserved output tokens at the output price", () => {
    expect(costReservation(price, { tokens: 100, param: "max_tokens" }, 401)).toEqual({ usd: (101 * 2 + 100 * 8) / 1e6, promptTokens: 101, outputTokens: 100 });
  });
  it("reserves the default output tokens when the request sets none", () => {
    expect(costReservation(price, { tokens: 0 }, 0)).toEqual({ usd: (DEFAULT_RESERVED_OUTPUT_TOKENS * 8) / 1e6, promptTokens: 0, outputTokens: 4096 });
  });
});

describe("the -cost headers", () => {
  it("write USD to the nano-dollar without trailing zeros", () => {
    expect([usdHeader(50), usdHeader(0.0421), usdHeader(1e-9), usdHeader(-0.5), usdHeader(49.999999999)]).toEqual(["50", "0.0421", "0.000000001", "0", "49.999999999"]);
  });

  it("describe the budget with the least left, apart from requests and tokens", () => {
    const rules = [
      { key: "app:a", requests: 100, cost: 50, windowMs: 30 * 86_400_000 },
      { key: "developer:d", cost: 10, windowMs: 86_400_000 },
      { key: "provider:p", requests: 5, windowMs: 60_000 },
    ];
    const headers = rateLimitHeaders(rules, [
      { remainingRequests: 90, resetRequestsMs: 1000, remainingCost: 12.5, countedCost: 37.5, resetCostMs: 3_600_000, retryAfterMs: 0 },
      { remainingCost: 2.25, countedCost: 7.75, resetCostMs: 60_000, retryAfterMs: 0 },
      { remainingRequests: 4, resetRequestsMs: 500, retryAfterMs: 0 },
    ]);
    expect(headers).toEqual({
      "x-ratelimit-limit-requests": "5",
      "x-ratelimit-remaining-requests": "4",
      "x-ratelimit-reset-requests": "500ms",
      "x-ratelimit-limit-cost": "10",
      "x-ratelimit-remaining-cost": "2.25",
      "x-ratelimit-reset-cost": "1m0s",
    });
  });

  it("leave out the -requests headers when no rule limits requests", () => {
    expect(rateLimitHeaders([{ key: "app:a", cost: 1, windowMs: 1000 }], [{ remainingCost: 1, countedCost: 0, resetCostMs: 0, retryAfterMs: 0 }])).toEqual({
      "x-ratelimit-limit-cost": "1",
      "x-ratelimit-remaining-cost": "1",
      "x-ratelimit-reset-cost": "0s",
    });
  });
});

describe("a refusal's amounts and durations", () => {
  it.each([
    [50, "$50"],
    [50.02, "$50.02"],
    [2.0024, "$2.00"],
    [0.5, "$0.50"],
    [0.01, "$0.01"],
    [0.0034, "$0.0034"],
    [0.012345, "$0.012"],
    [1e-9, "$0.000000001"],
    [0, "$0"],
  ])("$%d reads %s", (usd, text) => expect(formatUsd(usd)).toBe(text));

  it.each([
    [500, "1s"],
    [59_500, "60s"],
    [90_500, "1m 31s"],
    [3_600_000, "1h"],
    [5_400_000, "1h 30m"],
    [3 * 86_400_000 + 4 * 3_600_000, "3d 4h"],
    [3 * 86_400_000 + 4 * 3_600_000 + 1, "3d 5h"], // rounded up: a reset is never told early
    [30 * 86_400_000 - 5, "30d"],
  ])("%d ms reads %s", (ms, text) => expect(formatDuration(ms)).toBe(text));
});
