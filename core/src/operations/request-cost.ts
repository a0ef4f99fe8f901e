/**
 * A request's cost, worked out once when its reply has ended: the access log, the metrics and the
 * usage counters each ask, and the first one's answer is kept on the exchange.
 */
import type { Exchange } from "../server/exchange.ts";
import type { Pricing } from "./pricing.ts";

/** The cost in USD of `x` at `pricing` (its usage at the price of the model that answered); undefined when unknown. */
export function requestCost(pricing: Pricing, x: Exchange): number | undefined {
  if (x.cost === undefined) x.cost = x.usage ? (pricing.costOf(x.model, x.usage) ?? null) : null;
  return x.cost ?? undefined;
}
