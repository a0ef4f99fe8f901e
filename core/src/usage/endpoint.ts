/**
 * `GET /v1/usage` (README, "Usage"; admin keys only, `requireAdmin` in `routes.ts`): the usage
 * counters of the days asked for, added up per interval and group. A store that fails or does not
 * answer in `storage.timeout` is `storage_error`.
 */
import type { AppContext } from "../app-context.ts";
import { storageUnavailable } from "../errors.ts";
import { jsonReply, type Reply } from "../server/reply.ts";
import type { Handler } from "../server/route-handlers.ts";
import { parseUsageQuery } from "./usage-query.ts";
import { usageReport } from "./usage-report.ts";

/** Counters change with every request: no cache may keep a reply. */
const NO_STORE = { "cache-control": "no-store" };

export function createUsageHandler(ctx: AppContext): Handler {
  return async function usage(x): Promise<Reply> {
    const query = parseUsageQuery(x.query);
    let rows;
    try {
      rows = await ctx.usage.read({ firstDay: query.start, lastDay: query.end });
    } catch (error) {
      ctx.logger.error("storage: could not read the usage counters", { request_id: x.requestId }, error);
      throw storageUnavailable("read the usage counters", error);
    }
    return jsonReply(usageReport(rows, query), 200, NO_STORE);
  };
}
