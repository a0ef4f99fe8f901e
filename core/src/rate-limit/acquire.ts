/**
 * The one place where rate limits are applied (docs/interface.md, "Rate limits"), the same way for
 * chat completions, responses and images: an endpoint calls `acquireRateLimit` after validation and
 * capability checks, right before the upstream call, and `settle` on the grant once the reply is
 * complete.
 */
import { randomBytes } from "node:crypto";
import type { ConsolaInstance } from "consola";
import { costAt, type PricedUsage } from "../operations/pricing.ts";
import type { Exchange } from "../server/exchange.ts";
import { costUnits, type RateLimitDecision, type RateLimiter } from "../plugin.ts";
import { costReservation, type CostEstimate, type TargetPrice } from "./cost-reservation.ts";
import { rateLimitHeaders } from "./headers.ts";
import { LatestRateLimitStates } from "./latest-states.ts";
import { rulesFor, type RateLimitPolicy, type RateLimitScope, type ScopedRule } from "./policy.ts";
import { refusal, tooCostly, tooLarge } from "./refusal.ts";

export { isProviderRefusal } from "./refusal.ts";
export type { TargetPrice } from "./cost-reservation.ts";

/** The limiter and the limits of a router; built once by `createRouter`. */
export interface RateLimits {
  limiter: RateLimiter;
  policy: RateLimitPolicy;
  logger: ConsolaInstance;
  /** A reservation id unique across every router sharing the limiter. */
  nextId(): string;
  /** Told of each refusal with the scope of the limit that refused: the metrics count them (README, "Metrics"). */
  onRefusal?: (scope: RefusalScope) => void;
  /** The latest counters seen of each rule key, for the status page. */
  latest: LatestRateLimitStates;
}

/** Whose limit refused a request; `unavailable`: the limiter's store is down and it fails closed. */
export type RefusalScope = RateLimitScope | "unavailable";

export function createRateLimits(limiter: RateLimiter, policy: RateLimitPolicy, logger: ConsolaInstance): RateLimits {
  // A random prefix per router, then a counter: unique across routers sharing one Redis, and cheap.
  const prefix = `${randomBytes(6).toString("base64url")}.`;
  let counter = 0;
  return { limiter, policy, logger, nextId: () => prefix + (++counter).toString(36), latest: new LatestRateLimitStates() };
}

/** Tokens held from the decision until the reply's usage is known. */
export interface TokenReservation {
  tokens: number;
  /** The request field the number came from, named in a 429 when it alone exceeds a token limit. */
  param?: string;
}

/**
 * The reservation of a request body: its `max_completion_tokens`, `max_tokens` (chat) or
 * `max_output_tokens` (responses), whichever is set first; none when none is set. The prompt's own
 * tokens are not guessed: they are counted from the reply's usage.
 * @example tokenReservation({ max_completion_tokens: 256 }) // { tokens: 256, param: "max_completion_tokens" }
 */
export function tokenReservation(body: { max_completion_tokens?: number | null; max_tokens?: number | null; max_output_tokens?: number | null }): TokenReservation {
  for (const param of ["max_completion_tokens", "max_tokens", "max_output_tokens"] as const) {
    const value = body[param];
    if (typeof value === "number" && value > 0) return { tokens: Math.floor(value), param };
  }
  return { tokens: 0 };
}

/** The usage shapes of chat completions, responses and images: whichever fields a reply has. */
export interface TokenUsage {
  total_tokens?: number | null;
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
  input_tokens?: number | null;
  output_tokens?: number | null;
}

function totalTokens(usage: TokenUsage | null | undefined): number {
  if (!usage) return 0;
  const total = usage.total_tokens ?? (usage.prompt_tokens ?? usage.input_tokens ?? 0) + (usage.completion_tokens ?? usage.output_tokens ?? 0);
  return Number.isFinite(total) && total > 0 ? Math.floor(total) : 0;
}

export interface RateLimitInput {
  /** The provider that serves the request (`entry.provider`), for `providers.<name>.rate_limit`. */
  provider: string;
  /** Tokens to hold until `settle`, usually `tokenReservation(body)`. Default: none. */
  reserve?: TokenReservation;
  /**
   * The target's model and price (`pricing`), for budgets (README, "Budgets"): what the request
   * could cost there is held until `settle`, which counts its usage at that price. Without one the
   * request holds and counts no cost.
   */
  price?: TargetPrice;
  /**
   * Only the provider's limit: a request's later attempts, which its app and developer limits
   * counted once already (docs/interface.md, "Routing and resilience"). Its headers are not the reply's.
   */
  providerOnly?: boolean;
}

/** An admitted request. */
export interface RateLimitGrant {
  /**
   * The `x-ratelimit-*` headers (empty when no limit applies): the endpoint puts them on its reply
   * (an error reply gets them from `x.rateLimitHeaders`).
   */
  headers: Readonly<Record<string, string>>;
  /**
   * Counts the reply's real usage (its tokens, and its cost at the grant's price) in place of the
   * reservations. Call it exactly once the reply is complete (JSON, or the stream's end), and also
   * when the call failed or the client left (with no usage: the reservations are released). Later
   * calls are ignored; it never throws.
   *
   * `answeredBy`: another target answered than the one the grant was taken for (a fallback). The
   * usage then counts for the app and developer at that target's price, and nothing for this
   * grant's provider, whose call failed (its reservations are released).
   */
  settle(usage?: TokenUsage | null, answeredBy?: { price: TargetPrice | undefined }): void;
}

const NO_LIMIT: RateLimitGrant = Object.freeze({ headers: Object.freeze({}), settle() {} });

/** The scope of the limit that refused (the one that frees up last), for the metrics; `unavailable` when the store was down. */
function refusalScope(rules: readonly ScopedRule[], decision: RateLimitDecision): RefusalScope {
  if (decision.unavailable) return "unavailable";
  let worst = 0;
  decision.states.forEach((state, i) => {
    if (state.retryAfterMs > decision.states[worst]!.retryAfterMs) worst = i;
  });
  return rules[worst]?.scope ?? "app";
}

/**
 * Counts one request against the rate limits of its app, its developer and its provider
 * (`rate_limit` and `providers.<name>.rate_limit`; the `rateLimit` middleware puts them on
 * `x.rateLimits`), atomically, before the upstream call. The caller's scope is `x.principal`
 * (set by the `auth` middleware: an API key's app and developer, or a JWT's claims).
 *
 * Call it after validation and capability checks (a refused or invalid request must not count),
 * immediately before calling the provider, and call `settle` on the grant exactly once: with the
 * reply's `usage` once a JSON reply is in hand or a stream has ended, and with nothing when the
 * call failed or the client left, which releases the reserved tokens.
 *
 * @throws 429 `rate_limit_error` / `rate_limit_exceeded` with `retry-after`, `retry-after-ms` and
 *   the `x-ratelimit-*` headers, when any limit is reached or a budget has too little left for
 *   what the request could cost; nothing is counted then.
 * @example
 * const grant = await acquireRateLimit(x, { provider: entry.provider, reserve: tokenReservation(request) });
 * try {
 *   const reply = await entry.instance.chat(providerRequest, call);
 *   grant.settle(reply.usage);
 *   return reply;
 * } catch (error) {
 *   grant.settle();
 *   throw error;
 * }
 */
export function acquireRateLimit(x: Exchange, input: RateLimitInput): RateLimitGrant | Promise<RateLimitGrant> {
  // Without limits the grant is known at once: no promise to await on every request.
  const limits = x.rateLimits;
  return limits ? acquire(limits, x, input) : NO_LIMIT;
}

async function acquire(limits: RateLimits, x: Exchange, input: RateLimitInput): Promise<RateLimitGrant> {
  const principal = x.principal;
  let rules = rulesFor(limits.policy, { app: principal?.app ?? "default", developer: principal?.developer ?? "default", provider: input.provider });
  if (input.providerOnly) rules = rules.filter((rule) => rule.scope === "provider");
  if (rules.length === 0) return NO_LIMIT;
  const reserve = input.reserve ?? { tokens: 0 };
  const budgets = rules.some((rule) => rule.cost !== undefined);
  // A model without a price holds no cost: a budget counts priced models only (README, "Budgets").
  const estimate: CostEstimate | undefined = budgets && input.price ? costReservation(input.price.price, reserve, x.bodyBytes ?? 0) : undefined;
  for (const rule of rules) {
    if (rule.tokens !== undefined && reserve.tokens > rule.tokens) {
      limits.onRefusal?.(rule.scope);
      throw tooLarge(rule, reserve);
    }
    if (estimate && rule.cost !== undefined && costUnits(estimate.usd) > costUnits(rule.cost)) {
      limits.onRefusal?.(rule.scope);
      throw tooCostly(rule, reserve, estimate, input.price!);
    }
  }
  const id = limits.nextId();
  const reservedTokens = rules.some((rule) => rule.tokens !== undefined) ? reserve.tokens : 0;
  const reservedCost = estimate?.usd ?? 0;
  const decision = await limits.limiter.acquire({ id, rules, reservedTokens, reservedCost });
  limits.latest.record(rules, decision.states);
  const headers = rateLimitHeaders(rules, decision.states);
  if (!decision.allowed) {
    limits.onRefusal?.(refusalScope(rules, decision));
    throw refusal(rules, decision, headers, estimate);
  }
  if (!input.providerOnly) x.rateLimitHeaders = headers;

  const counts = !decision.unavailable && (budgets || rules.some((rule) => rule.tokens !== undefined));
  let settled = false;
  const send = (counted: readonly ScopedRule[], usedTokens: number, usedCost: number) => {
    limits.limiter.settle({ id, rules: counted, reservedTokens, reservedCost, usedTokens, usedCost }).catch((error: unknown) => {
      limits.logger.warn("settling a rate-limit reservation failed", { request_id: x.requestId }, error);
    });
  };
  return {
    headers,
    settle(usage, answeredBy) {
      if (settled) return;
      settled = true;
      if (!counts) return;
      const price = answeredBy ? answeredBy.price : input.price;
      const usedTokens = totalTokens(usage);
      // Chat and responses usage carry their cached-token details; an image's has none of that name.
      const usedCost = budgets && price && usage ? costAt(price.price, usage as PricedUsage) : 0;
      if (!answeredBy) return send(rules, usedTokens, usedCost);
      const own = rules.filter((rule) => rule.scope !== "provider");
      if (own.length > 0) send(own, usedTokens, usedCost);
      if (own.length < rules.length) send(rules.filter((rule) => rule.scope === "provider"), 0, 0);
    },
  };
}

/**
 * Wraps a stream's frames so that `settle` runs once they end, or when the reply is abandoned
 * (`return()` by the reply writer when the client leaves, even before the first frame). For SSE replies:
 * `sseReply(headers, settleAfterStream(frames, () => grant.settle(usage)))`.
 */
export function settleAfterStream<T>(frames: AsyncIterator<T>, settle: () => void): AsyncIterator<T> {
  // One `then` a frame, with handlers made once per stream.
  const read = (result: IteratorResult<T>): IteratorResult<T> => {
    if (result.done) settle();
    return result;
  };
  const failed = (error: unknown): never => {
    settle();
    throw error;
  };
  return {
    next: () => frames.next().then(read, failed),
    async return(value?: unknown) {
      try {
        return (await frames.return?.(value)) ?? { done: true, value: undefined as T };
      } finally {
        settle();
      }
    },
  };
}
