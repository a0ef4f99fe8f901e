/**
 * The `x-ratelimit-*` headers (docs/interface.md, "Rate limits"), made from a decision's rule
 * states. With several rules (app, developer, provider) each header pair describes the rule with
 * the least left, the one a client runs into first; the `-tokens` forms appear only when some rule
 * limits tokens, the `-cost` forms (USD) only when some rule is a budget. Reset times use OpenAI's notation (`1s`, `250ms`, `6m0s`), so clients that parse
 * OpenAI's headers read ours.
 */
import type { RateLimitRule, RateLimitRuleState } from "../plugin.ts";

/**
 * A duration in OpenAI's `x-ratelimit-reset-*` notation.
 * @example formatReset(250) // "250ms"; formatReset(1500) // "1.5s"; formatReset(360_000) // "6m0s"
 */
export function formatReset(ms: number): string {
  const total = Math.max(0, Math.ceil(ms));
  if (total < 1000) return total === 0 ? "0s" : `${total}ms`;
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor((total % 3_600_000) / 60_000);
  const seconds = (total % 60_000) / 1000;
  const s = `${Number(seconds.toFixed(3))}s`;
  if (hours > 0) return `${hours}h${minutes}m${s}`;
  if (minutes > 0) return `${minutes}m${s}`;
  return s;
}

/** The index of the state with the least `remaining`; on a tie, the one that resets last. */
function tightest(states: readonly RateLimitRuleState[], remaining: (s: RateLimitRuleState) => number | undefined, reset: (s: RateLimitRuleState) => number): number {
  let best = -1;
  for (let i = 0; i < states.length; i++) {
    const left = remaining(states[i]!);
    if (left === undefined) continue;
    const bestLeft = best < 0 ? undefined : remaining(states[best]!)!;
    if (bestLeft === undefined || left < bestLeft || (left === bestLeft && reset(states[i]!) > reset(states[best]!))) best = i;
  }
  return best;
}

/**
 * An amount of USD as the `-cost` headers write it: a plain decimal to the nano-dollar the limiters
 * count in, without trailing zeros.
 * @example usdHeader(50) // "50"; usdHeader(0.0421) // "0.0421"
 */
export function usdHeader(usd: number): string {
  return Math.max(0, usd).toFixed(9).replace(/\.?0+$/, "");
}

/** The `x-ratelimit-*` headers for `rules` and their `states` (same order); empty without states. */
export function rateLimitHeaders(rules: readonly RateLimitRule[], states: readonly RateLimitRuleState[]): Record<string, string> {
  const headers: Record<string, string> = {};
  if (states.length === 0) return headers;
  const r = tightest(states, (s) => s.remainingRequests, (s) => s.resetRequestsMs ?? 0);
  if (r >= 0 && rules[r]!.requests !== undefined) {
    headers["x-ratelimit-limit-requests"] = String(rules[r]!.requests);
    headers["x-ratelimit-remaining-requests"] = String(Math.max(0, states[r]!.remainingRequests!));
    headers["x-ratelimit-reset-requests"] = formatReset(states[r]!.resetRequestsMs ?? 0);
  }
  const t = tightest(states, (s) => s.remainingTokens, (s) => s.resetTokensMs ?? 0);
  if (t >= 0 && rules[t]!.tokens !== undefined) {
    headers["x-ratelimit-limit-tokens"] = String(rules[t]!.tokens);
    headers["x-ratelimit-remaining-tokens"] = String(Math.max(0, states[t]!.remainingTokens!));
    headers["x-ratelimit-reset-tokens"] = formatReset(states[t]!.resetTokensMs ?? 0);
  }
  const c = tightest(states, (s) => s.remainingCost, (s) => s.resetCostMs ?? 0);
  if (c >= 0 && rules[c]!.cost !== undefined) {
    headers["x-ratelimit-limit-cost"] = usdHeader(rules[c]!.cost!);
    headers["x-ratelimit-remaining-cost"] = usdHeader(states[c]!.remainingCost!);
    headers["x-ratelimit-reset-cost"] = formatReset(states[c]!.resetCostMs ?? 0);
  }
  return headers;
}
