/**
 * One counter of the in-process limiter: the requests, token amounts and cost amounts counted in a
 * sliding window, each with its time. The log is exact (at most `requests` in any window, never an
 * estimate) and holds at most about `requests` entries, since refused requests are not logged (and
 * none for a rule without `requests`).
 * Cost is counted in whole nano-dollars (`costUnits`), so its sum never drifts.
 */
import { COST_UNITS_PER_USD, costUnits, type RateLimitRule, type RateLimitRuleState } from "@modelmux/core";
import { AmountLog, compact } from "./amount-log.ts";

/** What one request holds in a counter until `settle`: its tokens, and its cost in nano-dollars. */
export interface Reserved {
  tokens: number;
  costUnits: number;
}

export class SlidingLog {
  private requests: number[] = [];
  private requestsHead = 0;
  private readonly tokens = new AmountLog();
  private readonly cost = new AmountLog();

  constructor(public windowMs: number) {}

  /** Forgets what left the window: an entry counts while `now < at + windowMs`. */
  prune(now: number): void {
    const cutoff = now - this.windowMs;
    while (this.requestsHead < this.requests.length && this.requests[this.requestsHead]! <= cutoff) this.requestsHead++;
    this.requestsHead = compact(this.requests, this.requestsHead);
    this.tokens.prune(cutoff);
    this.cost.prune(cutoff);
  }

  get empty(): boolean {
    return this.requestsHead === this.requests.length && this.tokens.empty && this.cost.empty;
  }

  /** Ms until the log admits one more request. */
  private requestsRetry(rule: RateLimitRule, now: number): number {
    const count = this.requests.length - this.requestsHead;
    if (rule.requests === undefined || count < rule.requests) return 0;
    return this.requests[this.requestsHead + count - rule.requests]! + this.windowMs - now;
  }

  /** This rule's verdict on one request reserving `reserved`; nothing is counted. */
  check(rule: RateLimitRule, reserved: Reserved, now: number): number {
    const requests = this.requestsRetry(rule, now);
    const tokens = rule.tokens === undefined ? 0 : this.tokens.retry(rule.tokens, reserved.tokens, now, this.windowMs);
    const cost = rule.cost === undefined ? 0 : this.cost.retry(costUnits(rule.cost), reserved.costUnits, now, this.windowMs);
    return Math.max(requests, tokens, cost);
  }

  /** Counts an admitted request and its reservations. */
  count(rule: RateLimitRule, id: string, reserved: Reserved, now: number): void {
    if (rule.requests !== undefined) this.requests.push(now);
    if (rule.tokens !== undefined && reserved.tokens > 0) this.tokens.add(reserved.tokens, now, id);
    if (rule.cost !== undefined && reserved.costUnits > 0) this.cost.add(reserved.costUnits, now, id);
  }

  /** Replaces reservation `id` (when still in the window) with what the request used, counted from `now`. */
  settle(rule: RateLimitRule, id: string, used: Reserved, now: number): void {
    if (rule.tokens !== undefined) {
      this.tokens.release(id);
      if (used.tokens > 0) this.tokens.add(used.tokens, now);
    }
    if (rule.cost !== undefined) {
      this.cost.release(id);
      if (used.costUnits > 0) this.cost.add(used.costUnits, now);
    }
  }

  /** The rule's counters as they are now, for the headers. */
  state(rule: RateLimitRule, now: number, retryAfterMs: number): RateLimitRuleState {
    const state: RateLimitRuleState = { retryAfterMs };
    if (rule.requests !== undefined) {
      const count = this.requests.length - this.requestsHead;
      state.remainingRequests = Math.max(0, rule.requests - count);
      state.resetRequestsMs = count === 0 ? 0 : this.requests[this.requestsHead]! + this.windowMs - now;
    }
    if (rule.tokens !== undefined) {
      const oldest = this.tokens.oldestAt();
      state.remainingTokens = Math.max(0, rule.tokens - this.tokens.sum);
      state.resetTokensMs = oldest === undefined ? 0 : oldest + this.windowMs - now;
    }
    if (rule.cost !== undefined) {
      const oldest = this.cost.oldestAt();
      state.remainingCost = Math.max(0, costUnits(rule.cost) - this.cost.sum) / COST_UNITS_PER_USD;
      state.countedCost = this.cost.sum / COST_UNITS_PER_USD;
      state.resetCostMs = oldest === undefined ? 0 : oldest + this.windowMs - now;
    }
    return state;
  }
}
