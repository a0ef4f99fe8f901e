/**
 * The status page (README, "Status page"): `GET /ui`, the page, served to anyone (it asks for the
 * key itself), and `GET /ui/status.json`, its figures, for admin keys only (`requireAdmin`: 401
 * without a valid key, 403 `admin_required` with a key that is not an admin one).
 */
import type { AppContext } from "../app-context.ts";
import { type UsageSource, usageTotals } from "../operations/activity-summary.ts";
import { countersUsageSource } from "./shared-usage.ts";
import { requireAdmin } from "../server/auth/admin.ts";
import { bytesReply, jsonReply } from "../server/reply.ts";
import type { Handler } from "../server/route-handlers.ts";
import { statusPage } from "./page.ts";
import { buildStatus } from "./status.ts";

/** The figures are true now, never later: no cache may keep them (they are an admin's too). */
const NO_STORE = { "cache-control": "no-store" };

export interface StatusPageOptions {
  /**
   * Where the usage by app and model (requests, tokens, cost) comes from. Default: this router's
   * activity window (`usageTotals`); the shared usage counters, which count every router, plug in here.
   */
  usageSource?: UsageSource;
}

export function createStatusPageHandlers(ctx: AppContext, options: StatusPageOptions = {}): { page: Handler; status: Handler } {
  const local: UsageSource = (range) => usageTotals(ctx.activity, range);
  // The day's usage from the usage counters: every router's when the storage keeps them (README, "Status page").
  const shared = Boolean(ctx.storage?.addUsage && ctx.storage.readUsage);
  const usage = options.usageSource ?? countersUsageSource(ctx.usage, local, shared);
  const { html, headers } = statusPage();
  const page = bytesReply(html, headers);
  return {
    page: function statusPageHtml() {
      return page;
    },
    status: requireAdmin(ctx.authenticate, async function statusJson() {
      return jsonReply(await buildStatus(ctx, usage), 200, NO_STORE);
    }),
  };
}
