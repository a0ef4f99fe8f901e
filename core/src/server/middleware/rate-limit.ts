/**
 * `rateLimit({ limits })`: the rate limits of apps, developers and providers (docs/interface.md,
 * "Rate limits") for the requests under it. The provider is known only once the body is read, so
 * the count is taken by the endpoint (`acquireRateLimit`), right before the upstream call, against
 * the limits this middleware hands it; without it no limit applies.
 */
import type { Middleware } from "h3";
import type { RateLimits } from "../../rate-limit/acquire.ts";
import { exchangeOf } from "../event-exchange.ts";

export interface RateLimitOptions {
  /** The limiter and policy `createRouter` built from `rate_limit`. */
  limits: RateLimits;
}

export function rateLimit(options: RateLimitOptions): Middleware {
  const { limits } = options;
  return function rateLimit(event, next) {
    exchangeOf(event).rateLimits = limits;
    return next();
  };
}
