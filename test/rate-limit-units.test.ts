/**
 * The pure parts of the core's rate limiting: the reset notation, which rule the headers describe,
 * the rules a request is counted against, and the token reservation of a body.
 */
import { describe, expect, it } from "vitest";
import { tokenReservation } from "../core/src/rate-limit/acquire.ts";
import { formatReset, rateLimitHeaders } from "../core/src/rate-limit/headers.ts";
import { rulesFor, type RateLimitPolicy } from "../core/src/rate-limit/policy.ts";

describe("formatReset", () => {
  it.each([
    [0, "0s"],
    [0.4, "1ms"],
    [250, "250ms"],
    [1000, "1s"],
    [1500, "1.5s"],
    [59_950, "59.95s"],
    [60_000, "1m0s"],
    [360_000, "6m0s"],
    [3_723_500, "1h2m3.5s"],
  ])("%d ms is %s", (ms, text) => expect(formatReset(ms)).toBe(text));
});

describe("rateLimitHeaders", () => {
  const rules = [
    { key: "app:a", requests: 100, tokens: 1000, windowMs: 60_000 },
    { key: "developer:d", requests: 10, windowMs: 60_000 },
    { key: "provider:p", requests: 500, tokens: 50, windowMs: 1_000 },
  ];
  it("describes the rule with the least left, for requests and for tokens apart", () => {
    const headers = rateLimitHeaders(rules, [
      { remainingRequests: 90, resetRequestsMs: 1000, remainingTokens: 700, resetTokensMs: 2000, retryAfterMs: 0 },
      { remainingRequests: 3, resetRequestsMs: 45_000, retryAfterMs: 0 },
      { remainingRequests: 400, resetRequestsMs: 10, remainingTokens: 20, resetTokensMs: 900, retryAfterMs: 0 },
    ]);
    expect(headers).toEqual({
      "x-ratelimit-limit-requests": "10",
      "x-ratelimit-remaining-requests": "3",
      "x-ratelimit-reset-requests": "45s",
      "x-ratelimit-limit-tokens": "50",
      "x-ratelimit-remaining-tokens": "20",
      "x-ratelimit-reset-tokens": "900ms",
    });
  });
  it("breaks a tie by the later reset, and sends no -tokens headers without a token limit", () => {
    const two = [rules[1]!, { key: "provider:q", requests: 20, windowMs: 60_000 }];
    expect(rateLimitHeaders(two, [{ remainingRequests: 0, resetRequestsMs: 100, retryAfterMs: 100 }, { remainingRequests: 0, resetRequestsMs: 5000, retryAfterMs: 5000 }])).toEqual({
      "x-ratelimit-limit-requests": "20",
      "x-ratelimit-remaining-requests": "0",
      "x-ratelimit-reset-requests": "5s",
    });
    expect(rateLimitHeaders(two, [])).toEqual({});
  });
});

describe("rulesFor", () => {
  const policy: RateLimitPolicy = {
    app: { requests: 10, windowMs: 60_000 },
    developer: { requests: 5, tokens: 100, windowMs: 60_000 },
    apps: new Map([["free", null], ["big", { requests: 1000, windowMs: 60_000 }]]),
    developers: new Map(),
    providers: new Map([["openai", { requests: 500, windowMs: 60_000 }]]),
  };
  it("takes the app's, the developer's and the provider's limits, overrides and exemptions applied", () => {
    expect(rulesFor(policy, { app: "a", developer: "d", provider: "openai" }).map((r) => [r.key, r.requests, r.tokens])).toEqual([
      ["app:a", 10, undefined],
      ["developer:d", 5, 100],
      ["provider:openai", 500, undefined],
    ]);
    expect(rulesFor(policy, { app: "big", developer: "d", provider: "echo" }).map((r) => [r.key, r.requests])).toEqual([["app:big", 1000], ["developer:d", 5]]);
    expect(rulesFor(policy, { app: "free", developer: "d", provider: "echo" }).map((r) => r.key)).toEqual(["developer:d"]);
  });
  it("keeps an app and a developer of the same name on separate counters", () => {
    const [app, developer] = rulesFor(policy, { app: "same", developer: "same", provider: "x" });
    expect(app!.key).not.toBe(developer!.key);
  });
});

describe("tokenReservation", () => {
  it("reads max_completion_tokens, else max_tokens, else max_output_tokens", () => {
    expect(tokenReservation({ max_completion_tokens: 256, max_tokens: 10 })).toEqual({ tokens: 256, param: "max_completion_tokens" });
    expect(tokenReservation({ max_tokens: 10 })).toEqual({ tokens: 10, param: "max_tokens" });
    expect(tokenReservation({ max_output_tokens: 64 })).toEqual({ tokens: 64, param: "max_output_tokens" });
    expect(tokenReservation({ max_tokens: null })).toEqual({ tokens: 0 });
  });
});
