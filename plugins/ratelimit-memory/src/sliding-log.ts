/**
 * One counter of the in-process limiter: the requests counted in a sliding window, each with its
 * time, and the token and cost amounts in buckets of the window (`amount-buckets.ts`). The request
 * log is exact (at most `requests` in any window, never an estimate) and holds at most `requests`
 * entries, since refused requests are not logged (and none for a rule without `requests`); the
 * amounts hold at most a hundred sums each, however busy the key.
 * Cost is counted in whole nano-dollars (`costUnits`), so its sum never drifts.
 */
import { COST_UNITS_PER_USD, costUnits, type RateLimitRule, type RateLimitRuleState } from "@modelmux/core";
import { AmountBuckets } from "./amount-buckets.ts";

/** What one request holds in a counter until `settle`: its tokens, and its cost in nano-dollars. */
export interface Reserved {
  tokens: number;
  costUnits: number;
}

/** Drops the first `head` items once they are most of the array: O(1) amortised per item. */
function compact<T>(items: T[], head: number): number {
  if (head < 64 || head * 2 < items.length) return head;
  items.splice(0, head);
  return 0;
}

export class SlidingLog {
  private requests: number[] = [];
  private requestsHead = 0;
  private readonly tokens: AmountBuckets;
  private readonly cost: AmountBuckets;
  private window: number;

  constructor(windowMs: number) {
    this.window = windowMs;
    this.tokens = new AmountBuckets(windowMs);
    this.cost = new AmountBuckets(windowMs);
  }

  get windowMs(): number {
    return this.window;
  }

  /** The rule's window, which a config reload may change. */
  set windowMs(windowMs: number) {
    if (windowMs === this.window) return;
    this.window = windowMs;
    this.tokens.setWindow(windowMs);
    this.cost.setWindow(windowMs);
  }

  /** How many entries the counter holds: request times, amount buckets and reservations. */
  get size(): number {
    return this.requests.length - this.requestsHead + this.tokens.size + this.cost.size;
  }

  /** Forgets what left the window: an entry counts while `now < at + windowMs`. */
  prune(now: number): void {
    const cutoff = now - this.windowMs;
    while (this.requestsHead < this.requests.length && this.requests[this.requestsHead]! <= cutoff) this.requestsHead++;
    this.requestsHead = compact(this.requests, this.requestsHead);
    this.tokens.prune(now);
    this.cost.prune(now);
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

  /** Replaces reservation `id` (removed from its bucket while that is in the window) with what the request used, counted from `now`. */
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
      state.remainingTokens = Math.max(0, rule.tokens - this.tokens.sum);
      state.resetTokensMs = this.tokens.resetMs(now);
    }
    if (rule.cost !== undefined) {
      state.remainingCost = Math.max(0, costUnits(rule.cost) - this.cost.sum) / COST_UNITS_PER_USD;
      state.countedCost = this.cost.sum / COST_UNITS_PER_USD;
      state.resetCostMs = this.cost.resetMs(now);
    }
    return state;
  }
}
