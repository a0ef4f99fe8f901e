/**
 * What one request adds to the metrics once its reply has ended (README, "Metrics"): its row of
 * `modelmux_requests_total` (endpoint, provider and model, status, error code, outcome), its
 * durations, its tokens and cost, and the routing of its attempts. Runs on the request path, for
 * every request: plain additions into `metric-series.ts`'s rows, and the histograms' observations.
 */
import type { TokenUsage } from "../rate-limit/acquire.ts";
import { BROKE_MID_STREAM, type AttemptRecord } from "../routing/types.ts";
import type { Exchange } from "../server/exchange.ts";
import { outcomeOf } from "../server/middleware/access-log.ts";
import { methodLabel, NONE, UNMATCHED, type TargetRow } from "./metric-series.ts";
import type { RouterMetrics } from "./metrics.ts";
import { requestCost } from "./request-cost.ts";

/** Counts the end of `x` with its status (an `EndListener`'s body). */
export function countRequest(m: RouterMetrics, x: Exchange, status: number): void {
  const { series, timings } = m;
  series.inFlight--;
  if (x.streaming) series.openStreams--;
  const target = series.target(x.model);
  const failure = x.failure;
  // A stream that failed after its 200 counts with the code of the error event it ended with.
  const code = failure === undefined ? NONE : series.codes.value(failure.code ?? failure.type);
  const row = series.request(methodLabel(x.method), x.route ?? UNMATCHED, target, status, code, outcomeOf(x, status), x.stream === true);
  row.count++;
  timings.duration.observe(row.duration, (performance.now() - x.startedAt) / 1000);
  if (x.streaming && x.repliedAt !== undefined) timings.ttft.observe(target.labels, (x.repliedAt - x.startedAt) / 1000);
  if (x.attempts !== undefined && x.attempts.length > 0) countAttempts(m, x.attempts);
  if (x.usage !== undefined) countUsage(m, x, target);
}

/**
 * The routing of one request's attempts, per target: each attempt by outcome; a retry (an attempt
 * on a target the request had tried already), a fallback (an attempt on a target other than its
 * first), a continuation (a stream that broke mid-way, followed by another attempt). A skipped
 * target made no attempt: counted as `skipped`, nothing more. The answering attempt's time is the
 * upstream latency.
 */
function countAttempts(m: RouterMetrics, attempts: readonly AttemptRecord[]): void {
  const { series } = m;
  const first = attempts[0]!.target;
  let answered: TargetRow | undefined;
  let answeredMs = 0;
  for (let i = 0; i < attempts.length; i++) {
    const attempt = attempts[i]!;
    const row = series.target(attempt.target);
    row.tried = true;
    row.attempts[attempt.outcome]++;
    if (attempt.outcome === "skipped") continue;
    if (attempt.outcome === "ok") {
      answered = row;
      answeredMs = attempt.durationMs;
    }
    if (attempt.target !== first) row.fallbacks++;
    if (triedBefore(attempts, i)) row.retries++;
    if (attempt.reason !== undefined && attempt.reason.startsWith(BROKE_MID_STREAM) && triedAfter(attempts, i)) row.continuations++;
  }
  if (answered !== undefined) m.timings.upstream.observe(answered.labels, answeredMs / 1000);
}

/** Whether an attempt before `i` was made on the same target. */
function triedBefore(attempts: readonly AttemptRecord[], i: number): boolean {
  const { target } = attempts[i]!;
  for (let j = 0; j < i; j++) if (attempts[j]!.target === target && attempts[j]!.outcome !== "skipped") return true;
  return false;
}

/** Whether an attempt after `i` was made, on any target. */
function triedAfter(attempts: readonly AttemptRecord[], i: number): boolean {
  for (let j = i + 1; j < attempts.length; j++) if (attempts[j]!.outcome !== "skipped") return true;
  return false;
}

function tokens(value: number | null | undefined): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}

/** Tokens and cost, by app, developer and the target that answered. */
function countUsage(m: RouterMetrics, x: Exchange, target: TargetRow): void {
  const { series } = m;
  // Chat's names, or the Responses API's.
  const usage: TokenUsage = x.usage!;
  const principal = x.principal;
  const row = series.usageOf(
    principal === undefined ? NONE : series.apps.value(principal.app),
    principal === undefined ? NONE : series.developers.value(principal.developer),
    target,
  );
  row.input += tokens(usage.prompt_tokens ?? usage.input_tokens);
  row.output += tokens(usage.completion_tokens ?? usage.output_tokens);
  const cost = requestCost(m.pricing, x);
  if (cost !== undefined) {
    row.cost += cost;
    row.priced = true;
  }
}
