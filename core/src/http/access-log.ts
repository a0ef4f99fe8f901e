/**
 * One access-log line per request, written by the logger in batches off the request path. Never
 * the Authorization header or a body: only who (app/developer), what, how it ended and how long.
 */
import type { Logger } from "../logger.ts";
import type { Exchange } from "./exchange.ts";
import { loggedPath } from "./error-reply.ts";

/** Logs the end of `x` with its status. */
export function logAccess(logger: Logger, x: Exchange, status: number): void {
  if (logger.level < 3) return; // below info: skip building the fields at all
  const ms = Math.round((performance.now() - x.startedAt) * 10) / 10;
  const { principal, model, usage } = x;
  logger.access(`${x.method} ${loggedPath(x.path)}`, {
    status,
    duration_ms: ms,
    ...(model && { model }),
    ...(usage && { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens }),
    ...(principal && { app: principal.app, developer: principal.developer }),
    request_id: x.requestId,
  });
}
