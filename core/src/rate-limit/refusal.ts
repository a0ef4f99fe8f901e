/**
 * The 429s of the rate limits (docs/interface.md, "Rate limits"): a decision that refused the
 * request, and a reservation no window could ever hold. Each message names the scope and the limit
 * that refused it; a budget's says what was spent and when it resets (README, "Budgets").
 */
import { ModelmuxError, rateLimited } from "../errors.ts";
import { costUnits, type RateLimitDecision, type RateLimitRuleState } from "../plugin.ts";
import type { CostEstimate, TargetPrice } from "./cost-reservation.ts";
import { formatReset } from "./headers.ts";
import type { ScopedRule } from "./policy.ts";
import type { TokenReservation } from "./acquire.ts";

const UNITS: ReadonlyArray<[string, number]> = [
  ["d", 86_400_000],
  ["h", 3_600_000],
  ["m", 60_000],
  ["s", 1000],
];

/**
 * A duration for a person, in its two largest units, rounded up in the smaller (so "resets in" is
 * never early), without a zero second part.
 * @example formatDuration(30 * 86_400_000) // "30d"; formatDuration(90_500) // "1m 31s"
 */
export function formatDuration(ms: number): string {
  const i = UNITS.findIndex(([, size]) => ms >= size);
  if (i < 0 || i === UNITS.length - 1) return `${Math.max(1, Math.ceil(ms / 1000))}s`;
  const [big, bigSize] = UNITS[i]!;
  const [small, smallSize] = UNITS[i + 1]!;
  const total = Math.ceil(ms / smallSize);
  const per = bigSize / smallSize;
  const high = Math.floor(total / per);
  const low = total % per;
  return low === 0 ? `${high}${big}` : `${high}${big} ${low}${small}`;
}

/**
 * An amount of USD for a person: whole dollars as such (`$50`), cents from a dollar up (`$50.02`),
 * two significant digits below (`$0.50`, `$0.01`, `$0.0034`).
 */
export function formatUsd(usd: number): string {
  if (usd <= 0) return "$0";
  if (Number.isInteger(usd)) return `$${usd}`;
  if (usd >= 1) return `$${usd.toFixed(2)}`;
  const text = usd.toFixed(Math.min(9, Math.max(2, 1 - Math.floor(Math.log10(usd)))));
  return `$${text.replace(/(\.\d\d\d*?)0+$/, "$1")}`;
}

function seconds(ms: number): string {
  return formatReset(Math.max(ms, 1000));
}

function describeLimit(rule: ScopedRule, what: "requests" | "tokens"): string {
  const amount = what === "requests" ? rule.requests : rule.tokens;
  return `${rule.scope} '${rule.name}': ${amount} ${what} per ${formatReset(rule.windowMs)}`;
}

function describeBudget(rule: ScopedRule): string {
  return `${rule.scope} '${rule.name}' budget of ${formatUsd(rule.cost!)} per ${formatDuration(rule.windowMs)}`;
}

/** What of `rule` refused the request: its requests, its budget, or its tokens. */
function exhausted(rule: ScopedRule, state: RateLimitRuleState, reservedCost: number): "requests" | "tokens" | "cost" {
  if (rule.requests !== undefined && state.remainingRequests! <= 0) return "requests";
  const remaining = costUnits(state.remainingCost);
  if (rule.cost !== undefined && (remaining === 0 || costUnits(reservedCost) > remaining)) return "cost";
  return rule.tokens !== undefined ? "tokens" : "requests";
}

/** The message of a budget that refused a request: spent, or too little left for what it could cost. */
function budgetMessage(rule: ScopedRule, state: RateLimitRuleState, estimate: CostEstimate | undefined, retryAfterMs: number): string {
  const resets = `resets in ${formatDuration(Math.max(retryAfterMs, 1000))}`;
  if (costUnits(state.remainingCost) === 0) return `The ${describeBudget(rule)} is spent: ${formatUsd(state.countedCost ?? rule.cost!)} used; ${resets}.`;
  const could = estimate ? formatUsd(estimate.usd) : "more";
  return `The ${describeBudget(rule)} has ${formatUsd(state.remainingCost!)} left, less than this request could cost (${could}); ${resets}, or ask for fewer output tokens.`;
}

/** The refusals whose limit was a provider's: the request may go to another target (`routing/routed-call.ts`). */
const providerRefusals = new WeakSet<ModelmuxError>();

/** Whether `error` is a 429 of ours because a provider's own limit (or budget) is full. */
export function isProviderRefusal(error: unknown): boolean {
  return error instanceof ModelmuxError && providerRefusals.has(error);
}

/** The 429 of a decision that refused the request: the rule that would admit it last names why. */
export function refusal(rules: readonly ScopedRule[], decision: RateLimitDecision, headers: Record<string, string>, estimate: CostEstimate | undefined): ModelmuxError {
  const retry = { ...headers, "retry-after-ms": String(Math.max(1, Math.ceil(decision.retryAfterMs))) };
  if (decision.unavailable) {
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
  const what = exhausted(rule, state, estimate?.usd ?? 0);
  const message =
    what === "cost"
      ? budgetMessage(rule, state, estimate, decision.retryAfterMs)
      : `Rate limit reached for ${describeLimit(rule, what)}. Try again in ${seconds(decision.retryAfterMs)}.`;
  const error = rateLimited(message, decision.retryAfterMs / 1000, retry);
  if (rule.scope === "provider") providerRefusals.add(error);
  return error;
}

/** A token reservation that no window could ever hold: the request can never pass, so it is told why. */
export function tooLarge(rule: ScopedRule, reserve: TokenReservation): ModelmuxError {
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
 * A cost reservation larger than a whole budget: the request could never pass there. A provider's
 * budget lets the request go on to its next target, whose price may fit.
 */
export function tooCostly(rule: ScopedRule, reserve: TokenReservation, estimate: CostEstimate, target: TargetPrice): ModelmuxError {
  const output = reserve.param ? `${reserve.param} ${reserve.tokens}` : `${estimate.outputTokens} output tokens reserved when no max_completion_tokens, max_tokens or max_output_tokens is set`;
  const error = new ModelmuxError(
    `Request too large for the ${describeBudget(rule)}: at ${target.model}'s price it could cost up to ${formatUsd(estimate.usd)} (${output}, about ${estimate.promptTokens} prompt tokens). Ask for fewer output tokens.`,
    {
      status: 429,
      type: "rate_limit_error",
      code: "rate_limit_exceeded",
      param: reserve.param ?? null,
      headers: { "retry-after": String(Math.max(1, Math.ceil(rule.windowMs / 1000))) },
    },
  );
  if (rule.scope === "provider") providerRefusals.add(error);
  return error;
}
