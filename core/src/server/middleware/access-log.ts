/**
 * `accessLog({ logger })`: one access-log line per request, written once its reply has ended (a
 * stream's last byte taken by the client), by the logger in batches off the request path. Never the
 * Authorization header or a body: only who (app/developer), what (the model as sent and as
 * served, a stream or not), how it ended (status, outcome, and the error code and reason of an
 * error reply or of a stream that ended with its error event), how long (in all, to the first
 * byte, upstream), the attempts and the tokens. The fields: README, "Access log".
 */
import type { Middleware } from "h3";
import type { Logger } from "../../logger.ts";
import { CLIENT_CLOSED, loggedPath } from "../error-reply.ts";
import { exchangeOf } from "../event-exchange.ts";
import type { EndListener, Exchange } from "../exchange.ts";
import type { AttemptRecord } from "../../routing/types.ts";
import type { Pricing } from "../../operations/pricing.ts";
import { requestCost } from "../../operations/request-cost.ts";

/** The most of an error's message a line keeps: enough to say why, never a wall of upstream text. */
const REASON_CHARS = 300;

/** How a request ended, in one word: `ok`, `error` (an error reply), `stream_failed` (a 200 stream that ended with its error event), `client_closed`. The metrics' `outcome` label too. */
export function outcomeOf(x: Exchange, status: number): string {
  if (status === CLIENT_CLOSED) return "client_closed";
  if (status >= 400) return "error";
  return x.failure ? "stream_failed" : "ok";
}

function ms(value: number): number {
  return Math.round(value * 10) / 10;
}

/** Logs the end of `x` with its status; `closed` says why the router closed the connection before the reply was whole. */
export function logAccess(logger: Logger, x: Exchange, status: number, closed?: string, pricing?: Pricing): void {
  if (logger.level < 3) return; // below info: skip building the fields at all
  const { principal, model, usage, failure } = x;
  // Assigned one by one, in the order they print: no spread object per field.
  const fields: Record<string, unknown> = { status, outcome: outcomeOf(x, status), duration_ms: ms(performance.now() - x.startedAt) };
  if (x.repliedAt !== undefined) fields.ttfb_ms = ms(x.repliedAt - x.startedAt);
  if (x.stream) fields.stream = true;
  if (x.requestedModel !== undefined && x.requestedModel !== model) fields.requested_model = x.requestedModel;
  if (model) fields.model = model;
  const answered = answeringAttempt(x.attempts);
  if (answered) fields.upstream_ms = ms(answered.durationMs);
  if (usage) {
    fields.prompt_tokens = usage.prompt_tokens;
    fields.completion_tokens = usage.completion_tokens;
    fields.total_tokens = usage.total_tokens;
    const cost = pricing && requestCost(pricing, x);
    if (cost !== undefined) fields.cost_usd = cost;
  }
  if (principal) {
    fields.app = principal.app;
    fields.developer = principal.developer;
  }
  if (failure) {
    fields.error_code = failure.code ?? failure.type;
    fields.reason = failure.message.length > REASON_CHARS ? `${failure.message.slice(0, REASON_CHARS)}…` : failure.message;
  }
  // Each attempt of a request that took more than one, in order: target, outcome, time, wait.
  if (x.attempts && x.attempts.length > 1) fields.attempts = x.attempts.map(attemptText).join(", ");
  if (closed) fields.closed = closed;
  if (x.requestId) fields.request_id = x.requestId;
  logger.access(`${x.method} ${loggedPath(x.path)}`, fields);
}

/** The attempt that answered: the last `ok` one (its duration is the upstream's latency, to the first content for a stream). */
function answeringAttempt(attempts: readonly AttemptRecord[] | undefined): AttemptRecord | undefined {
  if (attempts === undefined) return undefined;
  for (let i = attempts.length - 1; i >= 0; i--) if (attempts[i]!.outcome === "ok") return attempts[i];
  return undefined;
}

/** `openai/gpt-4o 503 retryable 120ms after 250ms` */
function attemptText(a: AttemptRecord): string {
  const status = a.status === undefined ? "" : ` ${a.status}`;
  const wait = a.waitMs > 0 ? ` after ${Math.round(a.waitMs)}ms` : "";
  return `${a.target}${status} ${a.outcome} ${Math.round(a.durationMs)}ms${wait}`;
}

export interface AccessLogOptions {
  logger: Logger;
  /** The config's `pricing`: each line gets the request's `cost_usd`. */
  pricing?: Pricing;
}

export function accessLog(options: AccessLogOptions): Middleware {
  const { logger, pricing } = options;
  const logEnd: EndListener = (x, status, closed) => logAccess(logger, x, status, closed, pricing);
  return function accessLog(event, next) {
    exchangeOf(event).onEnd(logEnd);
    return next();
  };
}
