/**
 * What a failed attempt means for the next one (docs/interface.md, "Routing and resilience"): try
 * the same target again, go to the next target, or give the client this error as it is. It reads
 * the errors the core already makes of upstream failures (`providerError`'s `upstream` facts,
 * `toUpstreamError`'s timeouts and broken connections) and changes nothing a client sees.
 */
import { ModelmuxError } from "../errors.ts";
import { isBrokenReply, isConnectionFailure, toUpstreamError } from "../upstream/client.ts";
import { parseRetryAfter } from "./backoff.ts";
import type { AttemptOutcome } from "./types.ts";

/** How an attempt failed: what to do next, the upstream's status and wait when it sent them, and a few words for the log. */
export interface FailureClass {
  outcome: Exclude<AttemptOutcome, "ok" | "skipped">;
  /** The provider's own HTTP status, when one came. */
  status?: number;
  /** How long the provider asked to wait (`retry-after-ms`, or `Retry-After` as seconds or a date). */
  retryAfterMs?: number;
  reason: string;
}

/** The provider statuses worth another try of the same target. */
const RETRYABLE_STATUS = new Set([408, 429, 500, 502, 503, 504, 529]);

/** The codes providers give a refusal on content grounds: OpenAI's (images, moderation) and Azure OpenAI's. */
const CONTENT_POLICY_CODES = new Set(["content_policy_violation", "content_filter"]);

/** Errors the router made that send the request to its next target (a provider's own limit is full). */
const toNextTarget = new WeakSet<ModelmuxError>();

/** Marks `error` as one that moves the request to its next target, never the same one. */
export function passToNextTarget(error: ModelmuxError): ModelmuxError {
  toNextTarget.add(error);
  return error;
}

/** The caller's own abort (the client left): never a failure to retry. */
export function isAbortError(error: unknown): boolean {
  return error instanceof Error && error.name === "AbortError";
}

/**
 * Classifies a failed attempt.
 * - `retryable`: a connection refused or reset before any reply byte; the provider's 408, 429,
 *   500, 502, 503, 504 or 529.
 * - `timeout`: the call's timeout (504 `upstream_timeout`) or a connect timeout: the next target.
 * - `next`: 400 `context_length_exceeded` (another target may have a larger context), a provider
 *   5xx outside the retried ones (501…), a reply that broke off once begun, or one the core could not
 *   read (502 `upstream_error`): the next target, never the same one.
 * - `final`: a content-policy refusal, any other 4xx, and whatever did not come from a provider
 *   (a bug, our own validation or limits) or was an abort: returned to the client as it is.
 * @param now the wall clock in ms, for a `Retry-After` given as an HTTP date.
 * @example
 * classifyFailure(providerError("openai", { status: 503, message: "busy", retryAfter: "2" }))
 * // { outcome: "retryable", status: 503, retryAfterMs: 2000, reason: "status 503" }
 */
export function classifyFailure(error: unknown, now: number = Date.now()): FailureClass {
  if (!(error instanceof ModelmuxError)) {
    if (isAbortError(error)) return { outcome: "final", reason: "client left" };
    // A timeout or broken connection no one mapped yet reads as the core's one classifier says.
    const mapped = toUpstreamError(error, "upstream", 0);
    return mapped instanceof ModelmuxError ? classifyFailure(mapped, now) : { outcome: "final", reason: "internal error" };
  }
  if (error.code === "upstream_timeout") return { outcome: "timeout", reason: "timeout" };
  if (toNextTarget.has(error)) return { outcome: "next", reason: error.code ?? "refused" };
  const upstream = error.upstream;
  if (upstream !== undefined) {
    const status = upstream.status;
    const retryAfterMs = parseRetryAfter({ "retry-after": upstream.retryAfter, "retry-after-ms": upstream.retryAfterMs }, now);
    const failure: FailureClass = { outcome: "final", status, reason: `status ${status}` };
    if (retryAfterMs !== undefined) failure.retryAfterMs = retryAfterMs;
    if (RETRYABLE_STATUS.has(status)) failure.outcome = "retryable";
    else if (error.code === "context_length_exceeded") {
      failure.outcome = "next";
      failure.reason = "context_length_exceeded";
    } else if (error.code !== null && CONTENT_POLICY_CODES.has(error.code)) failure.reason = "content policy";
    else if (status >= 500) failure.outcome = "next";
    return failure;
  }
  // Refused or reset before any reply byte: retried. A reply that broke off once begun: the next target.
  if (isBrokenReply(error)) return { outcome: "next", reason: "reply broke off" };
  if (isConnectionFailure(error)) return { outcome: "retryable", reason: "connection failed" };
  // A reply the core could not read (not the provider's format, nested or sized past the limits):
  // the same target would answer the same, another may not.
  if (error.code === "upstream_error") return { outcome: "next", reason: "unreadable reply" };
  if (error.code !== null && CONTENT_POLICY_CODES.has(error.code)) return { outcome: "final", reason: "content policy" };
  return { outcome: "final", reason: error.code ?? `status ${error.status}` };
}
