/**
 * The waits between tries of one target (core/src/routing/backoff.ts): exponential backoff with
 * full jitter and its cap, a provider's `Retry-After` (seconds or HTTP date) and `retry-after-ms`,
 * and a Retry-After past `max_retry_after` sending the request to the next target at once.
 */
import { describe, expect, it } from "vitest";
import { backoffDelay, parseRetryAfter, retryWait } from "../src/routing/backoff.ts";
import type { RetrySettings } from "../src/routing/types.ts";

const retry: RetrySettings = { attempts: 5, backoffMs: 250, maxBackoffMs: 8000, maxRetryAfterMs: 30_000 };
const almostOne = () => 0.999_999;

describe("backoffDelay", () => {
  it("doubles from backoff up to max_backoff, as the top of its jitter", () => {
    const tops = [0, 1, 2, 3, 4, 5, 6, 40, 2000].map((i) => backoffDelay(retry, i, almostOne));
    expect(tops).toEqual([249, 499, 999, 1999, 3999, 7999, 7999, 7999, 7999]);
  });

  it("is full jitter: random × cap, from 0", () => {
    expect(backoffDelay(retry, 0, () => 0)).toBe(0);
    expect(backoffDelay(retry, 2, () => 0.5)).toBe(500);
    expect(backoffDelay(retry, 10, () => 0.25)).toBe(2000);
  });

  it("stays within [0, cap] for any random number", () => {
    for (let i = 0; i < 200; i++) {
      const delay = backoffDelay(retry, i % 8, Math.random);
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThan(Math.min(8000, 250 * 2 ** (i % 8)));
    }
  });

  it("is 0 when no backoff is configured", () => {
    expect(backoffDelay({ ...retry, backoffMs: 0 }, 3000, almostOne)).toBe(0);
    expect(backoffDelay({ ...retry, maxBackoffMs: 0 }, 1, almostOne)).toBe(0);
  });
});

describe("parseRetryAfter", () => {
  const now = Date.parse("Tue, 01 Dec 2026 10:00:00 GMT");

  it("reads seconds", () => {
    expect(parseRetryAfter({ "retry-after": "7" }, now)).toBe(7000);
    expect(parseRetryAfter({ "retry-after": " 0 " }, now)).toBe(0);
    expect(parseRetryAfter({ "retry-after": "1.5" }, now)).toBe(1500);
  });

  it("reads an HTTP date against now; a past one is 0", () => {
    expect(parseRetryAfter({ "retry-after": "Tue, 01 Dec 2026 10:00:12 GMT" }, now)).toBe(12_000);
    expect(parseRetryAfter({ "retry-after": "Tue, 01 Dec 2026 09:59:00 GMT" }, now)).toBe(0);
  });

  it("prefers retry-after-ms, as a header string or a kept number", () => {
    expect(parseRetryAfter({ "retry-after": "2", "retry-after-ms": "1234" }, now)).toBe(1234);
    expect(parseRetryAfter({ "retry-after-ms": 40 }, now)).toBe(40);
    // A repeated header (an array in the client's headers): its first value.
    expect(parseRetryAfter({ "retry-after": ["3", "9"] }, now)).toBe(3000);
  });

  it("is undefined for nothing or nonsense", () => {
    expect(parseRetryAfter({}, now)).toBeUndefined();
    expect(parseRetryAfter({ "retry-after": "soon", "retry-after-ms": "-5" }, now)).toBeUndefined();
    expect(parseRetryAfter({ "retry-after": "", "retry-after-ms": "" }, now)).toBeUndefined();
    expect(parseRetryAfter({ "retry-after": null, "retry-after-ms": null }, now)).toBeUndefined();
  });
});

describe("retryWait", () => {
  it("waits what the provider asked, up to max_retry_after", () => {
    expect(retryWait(retry, 0, 12_000, almostOne)).toBe(12_000);
    expect(retryWait(retry, 0, 30_000, almostOne)).toBe(30_000);
    expect(retryWait(retry, 0, 0, almostOne)).toBe(0);
  });

  it("past max_retry_after: no wait, the next target at once", () => {
    expect(retryWait(retry, 0, 30_001, almostOne)).toBeUndefined();
  });

  it("without a Retry-After: the backoff", () => {
    expect(retryWait(retry, 1, undefined, () => 0.5)).toBe(250);
  });
});
