/**
 * @modelmux/ratelimit-memory: rate limits kept in the router's own memory, for one router process.
 * Every rule is a sliding window (`sliding-log.ts`): exact for requests, in buckets of a hundredth of
 * the window for tokens and cost (`amount-buckets.ts`); a decision over all of a request's rules runs synchronously, so it is atomic in Node's single thread. Several routers need
 * `ratelimit-redis` instead: each memory limiter counts only its own requests.
 *
 * @example
 * rate_limit:
 *   plugin: ratelimit-memory
 *   developer: { requests: 120, window: 60s }
 */
import { costUnits, defineRateLimiter, type JsonSchema, type RateLimitAcquire, type RateLimitDecision, type RateLimiter, type RateLimitRule, type RateLimitSettle } from "@modelmux/core";
import { SlidingLog, type Reserved } from "./sliding-log.ts";

/** `rate_limit.options` with `plugin: ratelimit-memory`. */
export interface MemoryLimiterOptions {
  /** How often counters with nothing left in their window are dropped, in ms. Default 60000. */
  sweep_interval_ms?: number;
}

export const optionsSchema: JsonSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    sweep_interval_ms: { type: "integer", minimum: 100, default: 60_000, description: "How often idle counters are dropped, in ms." },
  },
};

/** The memory limiter: a `RateLimiter` that can say how much one counter holds. */
export interface MemoryLimiter extends RateLimiter {
  /** The entries kept for rule key `key` (request times, amount buckets, reservations): for tests of its bounds. */
  entries(key: string): number;
}

/** A limiter on this process's memory; `now` is replaceable for tests. */
export function createMemoryLimiter({ sweep_interval_ms = 60_000 }: MemoryLimiterOptions = {}, now: () => number = Date.now): MemoryLimiter {
  const logs = new Map<string, SlidingLog>();
  const logOf = (rule: RateLimitRule): SlidingLog => {
    let log = logs.get(rule.key);
    if (!log) logs.set(rule.key, (log = new SlidingLog(rule.windowMs)));
    log.windowMs = rule.windowMs;
    return log;
  };
  // Drops counters of apps and developers that went quiet, so memory follows the active ones.
  const sweep = setInterval(() => {
    const at = now();
    for (const [key, log] of logs) {
      log.prune(at);
      if (log.empty) logs.delete(key);
    }
  }, sweep_interval_ms);
  sweep.unref();

  return {
    async acquire({ id, rules, reservedTokens, reservedCost }: RateLimitAcquire): Promise<RateLimitDecision> {
      const at = now();
      const reserved: Reserved = { tokens: reservedTokens, costUnits: costUnits(reservedCost) };
      const counters = rules.map(logOf);
      const retries = rules.map((rule, i) => {
        counters[i]!.prune(at);
        return counters[i]!.check(rule, reserved, at);
      });
      const retryAfterMs = Math.max(0, ...retries);
      const allowed = retryAfterMs === 0;
      if (allowed) rules.forEach((rule, i) => counters[i]!.count(rule, id, reserved, at));
      return { allowed, retryAfterMs, states: rules.map((rule, i) => counters[i]!.state(rule, at, retries[i]!)) };
    },
    async settle({ id, rules, usedTokens, usedCost }: RateLimitSettle): Promise<void> {
      const at = now();
      const used: Reserved = { tokens: usedTokens, costUnits: costUnits(usedCost) };
      for (const rule of rules) {
        if (rule.tokens === undefined && rule.cost === undefined) continue;
        const log = logOf(rule);
        log.prune(at);
        log.settle(rule, id, used, at);
      }
    },
    entries: (key) => logs.get(key)?.size ?? 0,
    close() {
      clearInterval(sweep);
      logs.clear();
    },
  };
}

export default defineRateLimiter<MemoryLimiterOptions>({
  name: "memory",
  optionsSchema,
  setup: (options) => createMemoryLimiter(options),
});
