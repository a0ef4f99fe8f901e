/**
 * `activity({ window, pricing })`: counts each `/v1/` request in the router's activity window
 * (`operations/activity.ts`) once its reply has ended, for the status page (README, "Status
 * page"): its app, served model, error code, latency, tokens, cost and upstream attempts. The page's own polling and
 * the probes (`/healthz`, `/readyz`, `/ui`) are not API traffic and are left out. Cheap: a few
 * counters and one map lookup, no await, nothing kept of the request itself.
 */
import type { Middleware } from "h3";
import { type ActivityWindow, NONE } from "../../operations/activity.ts";
import type { Pricing } from "../../operations/pricing.ts";
import { requestCost } from "../../operations/request-cost.ts";
import { CLIENT_CLOSED } from "../error-reply.ts";
import { exchangeOf } from "../event-exchange.ts";
import type { EndListener, Exchange } from "../exchange.ts";

/** The error code a request ended with, as the client got it; `""` for a success. */
function codeOf(x: Exchange, status: number): string {
  const failure = x.failure;
  if (failure) return failure.code ?? failure.type;
  if (status === CLIENT_CLOSED) return "client_closed";
  return status >= 400 ? `http_${status}` : "";
}

/** Counts the end of `x` with its status in `window`. */
export function recordActivity(window: ActivityWindow, x: Exchange, status: number, pricing?: Pricing): void {
  const usage = x.usage;
  window.record({
    app: x.principal?.app ?? NONE,
    model: x.model ?? NONE,
    code: codeOf(x, status),
    latencyMs: performance.now() - x.startedAt,
    promptTokens: usage?.prompt_tokens ?? 0,
    completionTokens: usage?.completion_tokens ?? 0,
    cost: usage && pricing ? requestCost(pricing, x) : undefined,
    attempts: x.attempts,
  });
}

export interface ActivityOptions {
  /** The window the status page reads (`createRouter` makes one per router). */
  window: ActivityWindow;
  /** The config's `pricing`: each request's cost. */
  pricing?: Pricing;
}

export function activity(options: ActivityOptions): Middleware {
  const { window, pricing } = options;
  const recordEnd: EndListener = (x, status) => recordActivity(window, x, status, pricing);
  return function activity(event, next) {
    const x = exchangeOf(event);
    if (x.path.startsWith("/v1/")) x.onEnd(recordEnd);
    return next();
  };
}
