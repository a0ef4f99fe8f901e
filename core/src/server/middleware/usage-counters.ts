/**
 * `usageCounters({ counters })`: adds each request to the usage counters once its reply has ended
 * (README, "Usage"): its caller, served model, status, tokens and cost. Adding is a few map
 * operations in memory; the counters are written to the store in batches, off the request path.
 */
import type { Middleware } from "h3";
import { exchangeOf } from "../event-exchange.ts";
import type { EndListener } from "../exchange.ts";
import type { UsageCounters } from "../../usage/usage-counters.ts";

export interface UsageCountersOptions {
  /** The router's counters (`createUsageCounters`), which `GET /v1/usage` reads. */
  counters: UsageCounters;
}

export function usageCounters(options: UsageCountersOptions): Middleware {
  const { counters } = options;
  const countEnd: EndListener = (x, status) => counters.count(x, status);
  return function usageCounters(event, next) {
    exchangeOf(event).onEnd(countEnd);
    return next();
  };
}
