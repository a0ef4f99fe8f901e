/**
 * `metrics({ metrics })`: counts each request in the router's metrics (README, "Metrics"): in
 * flight from here to the end of its reply, an open stream from its head to its end, and, once it
 * has ended, its endpoint, status, error code, durations, tokens, cost and attempts
 * (`operations/metrics-request.ts`). `GET /metrics` serves them; without this middleware only the
 * circuits and the rate-limit refusals move.
 */
import type { Middleware } from "h3";
import type { RouterMetrics } from "../../operations/metrics.ts";
import { exchangeOf } from "../event-exchange.ts";

export interface MetricsMiddlewareOptions {
  /** The router's metrics (`AppContext.metrics`, made by `createRouter`). */
  metrics: RouterMetrics;
}

/** h3's catch-all route, the router's 404: no route's request. */
const CATCH_ALL = "/**";

export function metrics(options: MetricsMiddlewareOptions): Middleware {
  const { requestStarted, requestEnded, streamStarted } = options.metrics;
  return function metrics(event, next) {
    const x = exchangeOf(event);
    // The route h3 matched: the endpoint of a request refused before its route runs (a 401 of `auth`).
    const route = event.context.matchedRoute?.route;
    if (route !== undefined && route !== CATCH_ALL) x.route = route;
    requestStarted();
    x.onEnd(requestEnded);
    x.onStreamStart(streamStarted);
    return next();
  };
}
