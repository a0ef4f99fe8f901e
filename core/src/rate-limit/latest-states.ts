/**
 * The latest counters this router saw of each rate-limit rule key (`app:web`, `provider:openai`),
 * for the status page (README, "Status page"): the states of every decision the limiter answered,
 * admitted or refused, as the `x-ratelimit-*` headers are made from them. On a shared limiter
 * (Redis) they are every router's counters as of this router's last request under that key. Keys
 * come from apps and developers, which identity-provider tokens can name freely: at most `max`
 * keys are kept, the longest unseen dropped first.
 */
import type { RateLimitRuleState } from "../plugins/rate-limit-contract.ts";
import type { ScopedRule } from "./policy.ts";

/** One rule key's latest state. */
export interface SeenRuleState {
  rule: ScopedRule;
  state: RateLimitRuleState;
  /** When it was seen, ms since the epoch. */
  at: number;
}

export class LatestRateLimitStates {
  private readonly seen = new Map<string, SeenRuleState>();

  /** @param max the most rule keys kept. @param now the wall clock. */
  constructor(
    private readonly max = 500,
    private readonly now: () => number = Date.now,
  ) {}

  /** Keeps the states of one decision: `states[i]` is `rules[i]`'s (a decision's states follow its rules). */
  record(rules: readonly ScopedRule[], states: readonly RateLimitRuleState[]): void {
    if (states.length === 0) return;
    const at = this.now();
    for (let i = 0; i < states.length && i < rules.length; i++) {
      const rule = rules[i]!;
      // Deleted and set again: the map's order is then least recently seen first.
      if (!this.seen.delete(rule.key) && this.seen.size >= this.max) this.seen.delete(this.seen.keys().next().value!);
      this.seen.set(rule.key, { rule, state: states[i]!, at });
    }
  }

  /** Every key kept, the most recently seen first. */
  list(): SeenRuleState[] {
    return [...this.seen.values()].reverse();
  }
}
