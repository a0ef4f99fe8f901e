/**
 * One counter of the in-process limiter: the requests and the token amounts counted in a sliding
 * window, each with its time. The log is exact (at most `requests` in any window, never an
 * estimate) and holds at most about `requests` entries, since refused requests are not logged.
 */
import type { RateLimitRule, RateLimitRuleState } from "@modelmux/core";

interface TokenEntry {
  at: number;
  tokens: number;
  /** The reservation's id, until `settle` replaces it with the used tokens. */
  id: string | undefined;
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
  private tokens: TokenEntry[] = [];
  private tokensHead = 0;
  private tokenSum = 0;
  private readonly reservations = new Map<string, TokenEntry>();

  constructor(public windowMs: number) {}

  /** Forgets what left the window: an entry counts while `now < at + windowMs`. */
  prune(now: number): void {
    const cutoff = now - this.windowMs;
    while (this.requestsHead < this.requests.length && this.requests[this.requestsHead]! <= cutoff) this.requestsHead++;
    this.requestsHead = compact(this.requests, this.requestsHead);
    while (this.tokensHead < this.tokens.length && this.tokens[this.tokensHead]!.at <= cutoff) {
      const entry = this.tokens[this.tokensHead++]!;
      this.tokenSum -= entry.tokens;
      if (entry.id !== undefined) this.reservations.delete(entry.id);
    }
    this.tokensHead = compact(this.tokens, this.tokensHead);
  }

  get empty(): boolean {
    return this.requestsHead === this.requests.length && this.tokensHead === this.tokens.length;
  }

  /** Ms until the log admits one more request. */
  private requestsRetry(rule: RateLimitRule, now: number): number {
    const count = this.requests.length - this.requestsHead;
    if (count < rule.requests) return 0;
    return this.requests[this.requestsHead + count - rule.requests]! + this.windowMs - now;
  }

  /** Ms until `reserved` more tokens fit: enough of the oldest amounts must leave the window. */
  private tokensRetry(limit: number, reserved: number, now: number): number {
    const excess = Math.max(this.tokenSum + reserved - limit, this.tokenSum - limit + 1);
    if (excess <= 0) return 0;
    if (reserved > limit) return this.windowMs;
    let freed = 0;
    for (let i = this.tokensHead; i < this.tokens.length; i++) {
      freed += this.tokens[i]!.tokens;
      if (freed >= excess) return this.tokens[i]!.at + this.windowMs - now;
    }
    return this.windowMs;
  }

  private oldestTokensAt(): number | undefined {
    for (let i = this.tokensHead; i < this.tokens.length; i++) if (this.tokens[i]!.tokens > 0) return this.tokens[i]!.at;
    return undefined;
  }

  /** This rule's verdict on one request reserving `reserved` tokens; nothing is counted. */
  check(rule: RateLimitRule, reserved: number, now: number): number {
    const requests = this.requestsRetry(rule, now);
    const tokens = rule.tokens === undefined ? 0 : this.tokensRetry(rule.tokens, reserved, now);
    return Math.max(requests, tokens);
  }

  /** Counts an admitted request and its reservation. */
  count(rule: RateLimitRule, id: string, reserved: number, now: number): void {
    this.requests.push(now);
    if (rule.tokens !== undefined && reserved > 0) this.addTokens(reserved, now, id);
  }

  addTokens(tokens: number, now: number, id?: string): void {
    const entry: TokenEntry = { at: now, tokens, id };
    this.tokens.push(entry);
    this.tokenSum += tokens;
    if (id !== undefined) this.reservations.set(id, entry);
  }

  /** Removes reservation `id` when it is still in the window. */
  release(id: string): void {
    const entry = this.reservations.get(id);
    if (!entry) return;
    this.reservations.delete(id);
    this.tokenSum -= entry.tokens;
    entry.tokens = 0;
    entry.id = undefined;
  }

  /** The rule's counters as they are now, for the headers. */
  state(rule: RateLimitRule, now: number, retryAfterMs: number): RateLimitRuleState {
    const count = this.requests.length - this.requestsHead;
    const state: RateLimitRuleState = {
      remainingRequests: Math.max(0, rule.requests - count),
      resetRequestsMs: count === 0 ? 0 : this.requests[this.requestsHead]! + this.windowMs - now,
      retryAfterMs,
    };
    if (rule.tokens !== undefined) {
      const oldest = this.oldestTokensAt();
      state.remainingTokens = Math.max(0, rule.tokens - this.tokenSum);
      state.resetTokensMs = oldest === undefined ? 0 : oldest + this.windowMs - now;
    }
    return state;
  }
}
