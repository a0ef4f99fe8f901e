/**
 * The shapes the routing modules share (docs/interface.md, "Routing and resilience"): the resolved
 * `routing` settings, a request's plan of targets, and the record of each attempt.
 */
import type { ModelEntry } from "../models/model-table.ts";

/** `routing.retry`, resolved (milliseconds). */
export interface RetrySettings {
  /** Extra tries of the same target after its first; 0 is none. */
  attempts: number;
  /** The first wait; doubles each try, full jitter. */
  backoffMs: number;
  maxBackoffMs: number;
  /** A provider's Retry-After up to this is waited; longer: the next target at once. */
  maxRetryAfterMs: number;
}

/** `routing.timeouts`, resolved (milliseconds); the provider's `timeout` stays the whole-call limit. */
export interface TimeoutSettings {
  connectMs: number;
  /** Streams: until the first content; past it the next target is tried. */
  firstTokenMs: number;
  /** Streams: the longest silence between events; past it the attempt has failed. */
  idleMs: number;
}

/** `routing.circuit_breaker`, resolved. */
export interface BreakerSettings {
  /** Consecutive retryable failures of one target that open its circuit. */
  failures: number;
  /** How long an open circuit stays open before one probe goes through. */
  cooldownMs: number;
}

/** The routing settings that apply to one provider: `routing`'s, with the provider block's overrides. */
export interface RoutingSettings {
  retry: RetrySettings;
  timeouts: TimeoutSettings;
  circuitBreaker: BreakerSettings;
}

/** One target of a request: a model, with the settings of its provider. */
export interface Target {
  entry: ModelEntry;
  settings: RoutingSettings;
}

/** How one attempt ended. */
export type AttemptOutcome =
  | "ok"
  /** Failed with an error worth another try (connection, 408, 429, 5xx, 529). */
  | "retryable"
  /** Timed out (whole call, connect, first token or idle): never tried again on the same target. */
  | "timeout"
  /** 400 context_length_exceeded: the next target may have a larger context. */
  | "next"
  /** Any other 4xx (a content-policy refusal among them): returned to the client as it is. */
  | "final"
  /** Not tried: its capabilities cannot serve the request, its circuit is open, or its provider limit is full. */
  | "skipped";

/** One line of a request's attempts, for `x-modelmux-attempts` and the access log. */
export interface AttemptRecord {
  /** `provider/model`. */
  target: string;
  outcome: AttemptOutcome;
  /** The upstream status when one came, else undefined. */
  status?: number;
  durationMs: number;
  /** How long the router waited before this attempt (backoff or Retry-After). */
  waitMs: number;
  /** Why it was skipped or failed, in a few words; a continued stream's broken attempt's starts with `BROKE_MID_STREAM`. */
  reason?: string;
}

/** How the reason of an attempt whose stream broke after its first content begins (`chat/continuation.ts`). */
export const BROKE_MID_STREAM = "broke mid-stream";
