/**
 * The one place where rate limits are applied (docs/interface.md, "Rate limits"), the same way for
 * chat completions, responses and images: an endpoint calls `acquireRateLimit` after validation and
 * capability checks, right before the upstream call, and `settle` on the grant once the reply is
 * complete.
 */
import { randomBytes } from "node:crypto";
import type { ConsolaInstance } from "consola";
import { ModelmuxError, rateLimited } from "../errors.ts";
import type { Exchange } from "../server/exchange.ts";
import type { RateLimitDecision, RateLimiter } from "../plugin.ts";
import { formatReset, rateLimitHeaders } from "./headers.ts";
import { LatestRateLimitStates } from "./latest-states.ts";
import { rulesFor, type RateLimitPolicy, type RateLimitScope, type ScopedRule } from "./policy.ts";

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
   * Counts the reply's real usage in place of the reservation. Call it exactly once the reply is
   * complete (JSON, or the stream's end), and also when the call failed or the client left (with no
   * usage: the reservation is released). Later calls are ignored; it never throws.
   */
  settle(usage?: TokenUsage | null): void;
}

const NO_LIMIT: RateLimitGrant = Object.freeze({ headers: Object.freeze({}), settle() {} });

function seconds(ms: number): string {
  return formatReset(Math.max(ms, 1000));
}

function describeLimit(rule: ScopedRule, what: "requests" | "tokens"): string {
  const amount = what === "requests" ? rule.requests : rule.tokens;
  return `${rule.scope} '${rule.name}': ${amount} ${what} per ${formatReset(rule.windowMs)}`;
}

function refusal(limits: RateLimits, rules: readonly ScopedRule[], decision: RateLimitDecision, headers: Record<string, string>) {
  const retry = { ...headers, "retry-after-ms": String(Math.max(1, Math.ceil(decision.retryAfterMs))) };
  if (decision.unavailable) {
    limits.onRefusal?.("unavailable");
    return rateLimited(
      `The rate limiter's store is unreachable and it is set to refuse requests until it is back (fail-closed). Try again in ${seconds(decision.retryAfterMs)}.`,
      decision.retryAfterMs / 1000,
      retry,
    );
  }
  let worst = 0;
  decision.states.forEach((state, i) => {
    if (state.retryAfterMs > decision.states[worst]!.retryAfterMs) worst = i;
  });
  const rule = rules[worst]!;
  const state = decision.states[worst]!;
  limits.onRefusal?.(rule.scope);
  const what = state.remainingRequests <= 0 || rule.tokens === undefined ? "requests" : "tokens";
  const error = rateLimited(`Rate limit reached for ${describeLimit(rule, what)}. Try again in ${seconds(decision.retryAfterMs)}.`, decision.retryAfterMs / 1000, retry);
  if (rule.scope === "provider") providerRefusals.add(error);
  return error;
}

/** The refusals whose limit was a provider's: the request may go to another target (`routing/routed-call.ts`). */
const providerRefusals = new WeakSet<ModelmuxError>();

/** Whether `error` is a 429 of ours because a provider's own limit is full. */
export function isProviderRefusal(error: unknown): boolean {
  return error instanceof ModelmuxError && providerRefusals.has(error);
}

/** A reservation that no window could ever hold: the request can never pass, so it is told why. */
function tooLarge(rule: ScopedRule, reserve: TokenReservation) {
  const field = reserve.param ?? "the token reservation";
  return new ModelmuxError(`Request too large for ${describeLimit(rule, "tokens")}: ${field} is ${reserve.tokens}. Lower ${field}.`, {
    status: 429,
    type: "rate_limit_error",
    code: "rate_limit_exceeded",
    param: reserve.param ?? null,
    headers: { "retry-after": String(Math.max(1, Math.ceil(rule.windowMs / 1000))) },
  });
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
 *   the `x-ratelimit-*` headers, when any limit is reached; nothing is counted then.
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
  for (const rule of rules) {
    if (rule.tokens !== undefined && reserve.tokens > rule.tokens) {
      limits.onRefusal?.(rule.scope);
      throw tooLarge(rule, reserve);
    }
  }
  const id = limits.nextId();
  const reservedTokens = rules.some((rule) => rule.tokens !== undefined) ? reserve.tokens : 0;
  const decision = await limits.limiter.acquire({ id, rules, reservedTokens });
  limits.latest.record(rules, decision.states);
  const headers = rateLimitHeaders(rules, decision.states);
  if (!decision.allowed) throw refusal(limits, rules, decision, headers);
  if (!input.providerOnly) x.rateLimitHeaders = headers;

  const countsTokens = !decision.unavailable && rules.some((rule) => rule.tokens !== undefined);
  let settled = false;
  return {
    headers,
    settle(usage) {
      if (settled) return;
      settled = true;
      if (!countsTokens) return;
      limits.limiter.settle({ id, rules, reservedTokens, usedTokens: totalTokens(usage) }).catch((error: unknown) => {
        limits.logger.warn("settling a rate-limit reservation failed", { request_id: x.requestId }, error);
      });
    },
  };
}

/**
 * Wraps a stream's frames so that `settle` runs once they end, or when the reply is abandoned
 * (`return()` by the reply writer when the client leaves, even before the first frame). For SSE replies:
 * `sseReply(headers, settleAfterStream(frames, () => grant.settle(usage)))`.
 */
export function settleAfterStream<T>(frames: AsyncIterator<T>, settle: () => void): AsyncIterator<T> {
  return {
    async next() {
      try {
        const result = await frames.next();
        if (result.done) settle();
        return result;
      } catch (error) {
        settle();
        throw error;
      }
    },
    async return(value?: unknown) {
      try {
        return (await frames.return?.(value)) ?? { done: true, value: undefined as T };
      } finally {
        settle();
      }
    },
  };
}
