/**
 * The status page's day of usage from the usage counters (README, "Usage"), which every router
 * sharing the storage adds to: its figures are then every router's, not this one's. The counters
 * keep UTC hours, so "the last day" is the last 24 hours counted, the current one included; the
 * last hour stays this router's activity window (exact to the minute).
 */
import type { ActivityRange, UsageSource, UsageTotals } from "../operations/activity-summary.ts";
import type { UsageRow as CounterRow } from "../plugins/storage-contract.ts";
import type { UsageCounters } from "../usage/usage-counters.ts";
import { dayOf, HOUR_MS, hourOf } from "../usage/usage-days.ts";

type PageRow = UsageTotals["by_app"][number];

function addTo(rows: Map<string, PageRow>, name: string, row: CounterRow): void {
  let page = rows.get(name);
  if (page === undefined) rows.set(name, (page = { name, requests: 0, errors: 0, prompt_tokens: 0, completion_tokens: 0, cost_usd: 0 }));
  page.requests += row.requests;
  page.errors += row.errors;
  page.prompt_tokens += row.inputTokens;
  page.completion_tokens += row.outputTokens;
  page.cost_usd += row.costNanoUsd / 1e9;
}

/** Most requests first, then by name (as the activity window's figures). */
function sorted(rows: Map<string, PageRow>): PageRow[] {
  return [...rows.values()].sort((a, b) => b.requests - a.requests || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * @param shared whether the counters are kept by a storage every router may share (else they are
 *   this router's own, in memory, and the figures say `router`)
 */
export function countersUsageSource(counters: UsageCounters, local: UsageSource, shared: boolean, now: () => number = Date.now): UsageSource {
  return async (range: ActivityRange) => {
    if (range === "hour") return local(range);
    const end = now();
    const hours = new Set<string>();
    for (let i = 0; i < 24; i++) hours.add(hourOf(end - i * HOUR_MS));
    const rows = await counters.read({ firstDay: dayOf(end - 23 * HOUR_MS), lastDay: dayOf(end) });
    const byApp = new Map<string, PageRow>();
    const byModel = new Map<string, PageRow>();
    for (const row of rows) {
      if (!hours.has(row.hour)) continue;
      addTo(byApp, row.app, row);
      addTo(byModel, row.model, row);
    }
    return { scope: shared ? "shared" : "router", by_app: sorted(byApp), by_model: sorted(byModel) };
  };
}
