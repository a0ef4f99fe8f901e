/**
 * How long to wait before trying the same target again (docs/interface.md, "Routing and
 * resilience"): the provider's own `Retry-After` / `retry-after-ms` when it sent one and it is not
 * too long, else exponential backoff with full jitter.
 */
import type { RetrySettings } from "./types.ts";

/**
 * The backoff before retry number `retryIndex` (0 for the first retry): a random wait between 0
 * and `backoffMs × 2^retryIndex`, capped at `maxBackoffMs` ("full jitter": retries of many
 * requests spread out instead of arriving together).
 * @param random a number in [0, 1), `Math.random` in production.
 * @example
 * backoffDelay({ attempts: 2, backoffMs: 250, maxBackoffMs: 8000, maxRetryAfterMs: 30000 }, 2, () => 0.5) // 500
 */
export function backoffDelay(retry: RetrySettings, retryIndex: number, random: () => number): number {
  if (retry.backoffMs <= 0 || retry.maxBackoffMs <= 0) return 0;
  // 2 ** 1100 is Infinity, which the cap turns back into a number.
  const cap = Math.min(retry.maxBackoffMs, retry.backoffMs * 2 ** Math.max(0, retryIndex));
  return Math.floor(random() * cap);
}

/** Where a provider's wait is read from: reply headers (lower-case names), or the values kept of them. */
export interface RetryAfterSource {
  /** Seconds, or an HTTP date. */
  "retry-after"?: string | readonly string[] | null | undefined;
  /** Milliseconds (OpenAI's); preferred, being exact. */
  "retry-after-ms"?: string | number | readonly string[] | null | undefined;
}

const first = <T>(value: T | readonly T[]): T | undefined => (Array.isArray(value) ? (value as readonly T[])[0] : (value as T));

const SECONDS = /^\d+(?:\.\d+)?$/;

/**
 * The wait a provider asked for, in milliseconds: `retry-after-ms`, else `Retry-After` as seconds
 * or an HTTP date (a date in the past is 0); undefined when it sent neither, or nothing readable.
 * @param now the wall clock in ms (`Date.now()`), against which a date is read.
 * @example
 * parseRetryAfter({ "retry-after": "Wed, 21 Oct 2015 07:28:30 GMT" }, Date.parse("Wed, 21 Oct 2015 07:28:00 GMT")) // 30000
 */
export function parseRetryAfter(source: RetryAfterSource, now: number): number | undefined {
  const ms = source["retry-after-ms"] == null ? undefined : first<string | number>(source["retry-after-ms"]);
  if (ms !== undefined && ms !== "") {
    const value = typeof ms === "number" ? ms : Number(ms.trim());
    if (Number.isFinite(value) && value >= 0) return value;
  }
  const header = source["retry-after"] == null ? undefined : first<string>(source["retry-after"])?.trim();
  if (!header) return undefined;
  if (SECONDS.test(header)) return Number(header) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * The wait before retry number `retryIndex` of a target: the provider's `retryAfterMs` when it
 * gave one, else the backoff. Undefined when the provider asked for longer than
 * `maxRetryAfterMs`: then the next target is tried at once, without waiting.
 */
export function retryWait(retry: RetrySettings, retryIndex: number, retryAfterMs: number | undefined, random: () => number): number | undefined {
  if (retryAfterMs === undefined) return backoffDelay(retry, retryIndex, random);
  return retryAfterMs > retry.maxRetryAfterMs ? undefined : retryAfterMs;
}
