/**
 * `accessLog({ logger })`: one access-log line per request, written once its reply has ended (a
 * stream's last byte taken by the client), by the logger in batches off the request path. Never the
 * Authorization header or a body: only who (app/developer), what, how it ended and how long.
 */
import type { Middleware } from "h3";
import type { Logger } from "../../logger.ts";
import { loggedPath } from "../error-reply.ts";
import { exchangeOf } from "../event-exchange.ts";
import type { EndListener, Exchange } from "../exchange.ts";
import type { AttemptRecord } from "../../routing/types.ts";

/** Logs the end of `x` with its status; `closed` says why the router closed the connection before the reply was whole. */
export function logAccess(logger: Logger, x: Exchange, status: number, closed?: string): void {
  if (logger.level < 3) return; // below info: skip building the fields at all
  const ms = Math.round((performance.now() - x.startedAt) * 10) / 10;
  const { principal, model, usage } = x;
  // Assigned one by one, in the order they print: no spread object per field.
  const fields: Record<string, unknown> = { status, duration_ms: ms };
  if (model) fields.model = model;
  if (usage) {
    fields.prompt_tokens = usage.prompt_tokens;
    fields.completion_tokens = usage.completion_tokens;
  }
  if (principal) {
    fields.app = principal.app;
    fields.developer = principal.developer;
  }
  // Each attempt of a request that took more than one, in order: target, outcome, time, wait.
  if (x.attempts && x.attempts.length > 1) fields.attempts = x.attempts.map(attemptText).join(", ");
  if (closed) fields.closed = closed;
  if (x.requestId) fields.request_id = x.requestId;
  logger.access(`${x.method} ${loggedPath(x.path)}`, fields);
}

/** `openai/gpt-4o 503 retryable 120ms after 250ms` */
function attemptText(a: AttemptRecord): string {
  const status = a.status === undefined ? "" : ` ${a.status}`;
  const wait = a.waitMs > 0 ? ` after ${Math.round(a.waitMs)}ms` : "";
  return `${a.target}${status} ${a.outcome} ${Math.round(a.durationMs)}ms${wait}`;
}

export interface AccessLogOptions {
  logger: Logger;
}

export function accessLog(options: AccessLogOptions): Middleware {
  const { logger } = options;
  const logEnd: EndListener = (x, status, closed) => logAccess(logger, x, status, closed);
  return function accessLog(event, next) {
    exchangeOf(event).onEnd(logEnd);
    return next();
  };
}
