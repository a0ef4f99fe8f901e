/**
 * The rate limiter's side of the plugin contract (`core/src/plugin.ts`): the rules the core builds
 * from `rate_limit` (README, "Rate limits"), what a limiter decides for them, and
 * `defineRateLimiter`. The conformance kit `testRateLimiter` of `@modelmux/core/testing` checks a
 * plugin against it.
 */
import type { JsonSchema, PluginContext } from "../plugin.ts";

/** The scopes a request is counted in (README, "Rate limits"): who calls, and which provider serves it. */
export interface RateLimitSubject {
  app: string;
  developer: string;
  provider: string;
}

/**
 * One limit a request is counted against: a counter and its budget per sliding window. The core
 * builds the rules from the config (`rate_limit.app`, `rate_limit.developer`,
 * `providers.<name>.rate_limit`) and the caller's scope; a limiter only counts, so it never needs
 * to know what an app or a provider is.
 */
export interface RateLimitRule {
  /** The counter's name, unique per scope and value: `app:my-app`, `developer:alice`, `provider:openai`. */
  key: string;
  /**
   * Requests allowed in any window of `windowMs`; absent when only tokens or cost are limited (a
   * budget over 30 days), and then the limiter keeps no log of the requests.
   */
  requests?: number;
  /** Tokens allowed in any window of `windowMs`; absent when only requests are limited. */
  tokens?: number;
  /** A budget: USD allowed in any window of `windowMs` (more than 0); absent when spending is not limited. */
  cost?: number;
  /** The window's length, in ms (more than 0). */
  windowMs: number;
}

/** A rule's counters right after a decision, for the `x-ratelimit-*` headers. */
export interface RateLimitRuleState {
  /** Only for a rule with `requests`: requests still allowed in the window (after this one, when it was counted). */
  remainingRequests?: number;
  /** Only for a rule with `requests`: ms until the oldest request counted in the window leaves it (0 when none is counted). */
  resetRequestsMs?: number;
  /** Only for a rule with `tokens`: tokens still allowed, the reservation of this request deducted. */
  remainingTokens?: number;
  /** Only for a rule with `tokens`: ms until the oldest tokens counted in the window leave it. */
  resetTokensMs?: number;
  /** Only for a rule with `cost`: USD still allowed, the reservation of this request deducted; never below 0. */
  remainingCost?: number;
  /** Only for a rule with `cost`: USD counted in the window (spent, and reserved by requests in flight); may pass `cost`. */
  countedCost?: number;
  /** Only for a rule with `cost`: ms until the oldest amount counted in the window leaves it. */
  resetCostMs?: number;
  /** Ms until this rule would admit the request; 0 when it admits it now. */
  retryAfterMs: number;
}

/** One rate-limit decision for a request, taken before the upstream call. */
export interface RateLimitDecision {
  /** True when every rule admitted the request: it was then counted in every rule; otherwise in none. */
  allowed: boolean;
  /** One state per rule, in the order of the request's `rules`; empty when `unavailable`. */
  states: RateLimitRuleState[];
  /** Ms until the request would be admitted (the largest of the refusing rules'); 0 when allowed. */
  retryAfterMs: number;
  /**
   * Set when the limiter could not reach its store and decided by its failure policy
   * (fail-open: allowed; fail-closed: refused). Nothing was counted.
   */
  unavailable?: boolean;
}

/**
 * What `acquire` counts: one request, `reservedTokens` in every rule that limits tokens and
 * `reservedCost` in every rule that limits cost.
 */
export interface RateLimitAcquire {
  /** Names this request's reservation for `settle`; unique across every router sharing the limiter. */
  id: string;
  rules: readonly RateLimitRule[];
  /** Tokens held in every rule with a `tokens` budget until `settle` (0: none). */
  reservedTokens: number;
  /** USD held in every rule with a `cost` budget until `settle` (0 or absent: none). */
  reservedCost?: number;
}

/** What `settle` reconciles: the same `id`, `rules`, `reservedTokens` and `reservedCost` as the `acquire`. */
export interface RateLimitSettle extends RateLimitAcquire {
  /** The tokens the reply really used; 0 when none or unknown (a failed or aborted call). */
  usedTokens: number;
  /** The USD the reply really cost; 0 or absent when nothing or unknown (a failed call, a model without a price). */
  usedCost?: number;
}

/**
 * How many units a limiter counts one USD in: whole nano-dollars. Amounts of cost are USD in the
 * contract, but a sum of floats drifts and two routers adding the same amounts in another order
 * could disagree about the last cent; whole units add up exactly (in a JavaScript number, and as
 * Redis integers) up to 2^53 units, about nine million dollars in one window.
 */
export const COST_UNITS_PER_USD = 1_000_000_000;

/**
 * `usd` in whole nano-dollars (`COST_UNITS_PER_USD`), rounded up, so a request is never counted
 * cheaper than it was: less than a nano-dollar a request, far below any price. A product a float's
 * rounding error above a whole unit (`0.067 * 1e9` is 67000000.00000001) is that unit. 0 for 0, a
 * negative amount or NaN.
 * @example costUnits(50) // 50_000_000_000; costUnits(0.0000000001) // 1
 */
export function costUnits(usd: number | undefined): number {
  if (usd === undefined || !(usd > 0)) return 0;
  const units = usd * COST_UNITS_PER_USD;
  // The product may land a rounding error or two off a whole unit: that is no fraction to round up.
  const whole = Math.round(units);
  return Math.max(1, Math.abs(units - whole) <= whole * 4.5e-16 ? whole : Math.ceil(units));
}

/**
 * A rate-limit backend (`rate_limit.plugin`, README "Rate limits"). Every limiter keeps the same
 * rules, so the two built-in ones behave alike and a test of one describes the other:
 * - a sliding window per rule: at most `requests` requests, `tokens` tokens and `cost` USD in any
 *   `windowMs`, each only when the rule sets it; requests exactly, amounts (tokens, cost) in buckets
 *   of a hundredth of the window, so what a rule keeps does not grow with traffic (README "Budgets");
 * - a request is admitted when every rule has room for one more request, and for its reservations on
 *   top of the tokens and cost counted (with nothing reserved, while less than the limit is counted);
 * - admission is all-or-nothing and atomic: concurrent calls never both take the last unit;
 * - tokens and cost reserved at `acquire` count from then until `settle`, which removes them and
 *   counts the used amounts from the time of `settle` (the usage is known only once the reply is
 *   complete);
 * - cost is counted exactly, in whole nano-dollars (`costUnits`), so limiters sharing a store agree
 *   to the unit.
 * The conformance kit `testRateLimiter` of `@modelmux/core/testing` checks these rules.
 */
export interface RateLimiter {
  /** Decides, and when every rule admits the request, counts it, in one atomic step. */
  acquire(request: RateLimitAcquire): Promise<RateLimitDecision>;
  /** Replaces the reservations of an admitted request with the tokens and cost it used. Never rejects. */
  settle(request: RateLimitSettle): Promise<void>;
  /**
   * Optional: whether the limiter's store answers now (a Redis PING), for `GET /readyz`
   * (docs/plugins.md, "Readiness"); the same rules as `Storage.ready`. Without it the limiter
   * counts as ready once set up.
   */
  ready?(): Promise<void> | void;
  close?(): Promise<void> | void;
}

export interface RateLimiterDefinition<Options = Record<string, unknown>> {
  kind: "ratelimit";
  name: string;
  optionsSchema: JsonSchema;
  setup(options: Options, ctx: PluginContext): RateLimiter | Promise<RateLimiter>;
}

/** Defines a rate-limit plugin. */
export function defineRateLimiter<Options>(definition: Omit<RateLimiterDefinition<Options>, "kind">): RateLimiterDefinition<Options> {
  return { kind: "ratelimit", ...definition };
}
