/**
 * @modelmux/ratelimit-redis: rate limits shared by any number of routers through one Redis. Every
 * rule is a sliding window like `ratelimit-memory`'s: exact for requests, in buckets of a hundredth of
 * the window for tokens and cost; a decision over all of a request's rules is one Lua script (`scripts.ts`), atomic in Redis. When Redis cannot be reached, each
 * decision follows `on_error` (admit uncounted, or refuse) at once: commands time out after
 * `command_timeout_ms` and are never queued while the connection is down.
 *
 * @example
 * rate_limit:
 *   plugin: ratelimit-redis
 *   options: { url: "redis://127.0.0.1:6379", on_error: open }
 *   developer: { requests: 120, window: 60s }
 */
import {
  COST_UNITS_PER_USD,
  costUnits,
  defineRateLimiter,
  type JsonSchema,
  type PluginContext,
  type RateLimitAcquire,
  type RateLimitDecision,
  type RateLimiter,
  type RateLimitRule,
  type RateLimitRuleState,
  type RateLimitSettle,
} from "@modelmux/core";
import { Redis } from "ioredis";
import { ACQUIRE, SETTLE } from "./scripts.ts";

/** `rate_limit.options` with `plugin: ratelimit-redis`. */
export interface RedisLimiterOptions {
  /** The connection URL. Default `redis://127.0.0.1:6379`. */
  url?: string;
  /** Prefix of every key. Default `modelmux:rl:`. */
  prefix?: string;
  /** When Redis cannot be reached: `open` admits requests uncounted, `closed` refuses them (429). Default `open`. */
  on_error?: "open" | "closed";
  /** A decision that Redis has not answered within this many ms follows `on_error`. Default 1000. */
  command_timeout_ms?: number;
  /** How long a connection attempt may take, in ms. Default 1000. */
  connect_timeout_ms?: number;
}

export const optionsSchema: JsonSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    url: { type: "string", pattern: "^rediss?://", default: "redis://127.0.0.1:6379", description: "The connection URL." },
    prefix: { type: "string", minLength: 1, default: "modelmux:rl:", description: "Prefix of every key." },
    on_error: { enum: ["open", "closed"], default: "open", description: "Redis unreachable: admit uncounted (open) or refuse (closed)." },
    command_timeout_ms: { type: "integer", minimum: 1, default: 1000, description: "A decision Redis has not answered by then follows on_error." },
    connect_timeout_ms: { type: "integer", minimum: 1, default: 1000, description: "How long a connection attempt may take." },
  },
};

interface Scripts {
  modelmuxAcquire(keyCount: number, ...keysAndArgs: Array<string | number>): Promise<number[]>;
  modelmuxSettle(keyCount: number, ...keysAndArgs: Array<string | number>): Promise<number>;
}

/** While Redis is down, a refused request is told to come back after this long. */
const CLOSED_RETRY_MS = 1000;

/** The script's reply, per rule: remaining requests, reset ms, then remaining, counted and reset ms of tokens and cost, then retry ms. */
const PER_RULE = 9;

function toDecision(reply: number[], rules: readonly RateLimitRule[]): RateLimitDecision {
  const states = rules.map((rule, i): RateLimitRuleState => {
    const [remainingRequests, resetRequestsMs, remainingTokens, , resetTokensMs, remainingUnits, countedUnits, resetCostMs, retryAfterMs] = reply.slice(
      2 + i * PER_RULE,
      2 + (i + 1) * PER_RULE,
    ) as number[];
    const state: RateLimitRuleState = { retryAfterMs: retryAfterMs! };
    if (rule.requests !== undefined) Object.assign(state, { remainingRequests, resetRequestsMs });
    if (rule.tokens !== undefined) Object.assign(state, { remainingTokens, resetTokensMs });
    if (rule.cost !== undefined) {
      Object.assign(state, { remainingCost: remainingUnits! / COST_UNITS_PER_USD, countedCost: countedUnits! / COST_UNITS_PER_USD, resetCostMs });
    }
    return state;
  });
  return { allowed: reply[0] === 1, retryAfterMs: reply[1]!, states };
}

/** A limiter on the Redis at `url`; connects before it returns, and starts even when Redis is down. */
export async function createRedisLimiter(options: RedisLimiterOptions, logger: PluginContext["logger"]): Promise<RateLimiter> {
  const { url = "redis://127.0.0.1:6379", prefix = "modelmux:rl:", on_error = "open", command_timeout_ms = 1000, connect_timeout_ms = 1000 } = options;
  const redis = new Redis(url, {
    lazyConnect: true,
    commandTimeout: command_timeout_ms,
    connectTimeout: connect_timeout_ms,
    // Fail now rather than wait for a reconnect: the decision then follows on_error at once.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // No INFO round trip before the connection counts as up: a busy event loop at start-up could
    // time it out and drop a connection that works.
    enableReadyCheck: false,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  redis.defineCommand("modelmuxAcquire", { lua: ACQUIRE });
  redis.defineCommand("modelmuxSettle", { lua: SETTLE });
  const scripts = redis as unknown as Scripts;
  // Logs name the server, never the URL's password.
  const server = URL.canParse(url) ? new URL(url).host : "redis";
  let down = false;
  const failed = (error: unknown) => {
    if (down) return;
    down = true;
    const policy = on_error === "open" ? "requests are admitted uncounted" : "requests are refused";
    logger.warn(`Redis at ${server} is unreachable (${error instanceof Error ? error.message : String(error)}); ${policy} (on_error: ${on_error}) until it is back`);
  };
  const recovered = () => {
    if (!down) return;
    down = false;
    logger.info(`Redis at ${server} is back; requests are counted again`);
  };
  // ioredis reports every reconnect attempt; the decisions' own failures are what gets logged.
  // The last one is kept for a readiness check that fails while the connection is down.
  let connectionError: string | undefined;
  redis.on("error", (error: Error) => (connectionError = error.message));
  redis.on("ready", () => (connectionError = undefined));
  // Start serving after connect_timeout_ms at most: a Redis that accepts but never answers must
  // not hold the router's start; ioredis goes on reconnecting in the background.
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    redis.connect().catch(failed),
    new Promise<void>((resolve) => (timer = setTimeout(() => resolve(failed(new Error(`no answer within ${connect_timeout_ms} ms`))), connect_timeout_ms))),
  ]);
  clearTimeout(timer);

  const keysOf = (key: string) => [`${prefix}${key}:r`, `${prefix}${key}:tb`, `${prefix}${key}:cb`, `${prefix}${key}:q`];

  return {
    async acquire({ id, rules, reservedTokens, reservedCost }: RateLimitAcquire): Promise<RateLimitDecision> {
      const keys: string[] = [];
      const args: Array<string | number> = [id, reservedTokens, costUnits(reservedCost)];
      for (const rule of rules) {
        keys.push(...keysOf(rule.key));
        args.push(rule.requests ?? -1, rule.tokens ?? -1, rule.cost === undefined ? -1 : costUnits(rule.cost), rule.windowMs);
      }
      try {
        const reply = await scripts.modelmuxAcquire(keys.length, ...keys, ...args);
        recovered();
        return toDecision(reply, rules);
      } catch (error) {
        failed(error);
        return on_error === "open"
          ? { allowed: true, retryAfterMs: 0, states: [], unavailable: true }
          : { allowed: false, retryAfterMs: CLOSED_RETRY_MS, states: [], unavailable: true };
      }
    },
    async settle({ id, rules, reservedTokens, usedTokens, reservedCost, usedCost }: RateLimitSettle): Promise<void> {
      const limited = rules.filter((rule) => rule.tokens !== undefined || rule.cost !== undefined);
      if (limited.length === 0) return;
      const keys = limited.flatMap((rule) => keysOf(rule.key).slice(1));
      const args = [id, reservedTokens, usedTokens, costUnits(reservedCost), costUnits(usedCost)];
      for (const rule of limited) args.push(rule.windowMs, rule.tokens === undefined ? 0 : 1, rule.cost === undefined ? 0 : 1);
      try {
        await scripts.modelmuxSettle(keys.length, ...keys, ...args);
      } catch (error) {
        // The reservation then lapses with its window; the decisions report the outage.
        logger.debug(`settling ${id} on Redis failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    },
    // One PING, bounded by command_timeout_ms; refused at once while the connection is down (docs/plugins.md, "Readiness").
    async ready() {
      try {
        await redis.ping();
      } catch (error) {
        // While the connection is down, its own error (ECONNREFUSED…) says more than the command's.
        const why = redis.status !== "ready" && connectionError ? connectionError : error instanceof Error ? error.message : String(error);
        throw new Error(`Redis at ${server} did not answer PING: ${why}`);
      }
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

export default defineRateLimiter<RedisLimiterOptions>({
  name: "redis",
  optionsSchema,
  setup: (options, ctx) => createRedisLimiter(options, ctx.logger),
});
