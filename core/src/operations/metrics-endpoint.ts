/**
 * `GET /metrics` (README, "Metrics"): the router's metrics as Prometheus text, for admin keys only
 * (`requireAdmin` in `routes.ts`). Never cached: a scrape reads the counts of its moment.
 */
import type { AppContext } from "../app-context.ts";
import { bytesReply, type Reply } from "../server/reply.ts";
import type { Handler } from "../server/route-handlers.ts";

export function createMetricsHandler(ctx: AppContext): Handler {
  return async function metrics(): Promise<Reply> {
    const text = await ctx.metrics.text();
    return bytesReply(Buffer.from(text, "utf8"), { "content-type": ctx.metrics.contentType, "cache-control": "no-store" });
  };
}
