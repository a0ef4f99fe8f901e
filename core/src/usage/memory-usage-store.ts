/**
 * Usage counters in the router's memory (README, "Usage"): where they go when there is no storage
 * plugin, or its plugin keeps none. One router's counts, since it started; rows of days past the
 * retention are dropped as new days begin.
 */
import type { UsageCounts, UsageDelta, UsageRange, UsageRow } from "../plugins/storage-contract.ts";
import { oldestUsageDay, usageDays } from "./usage-days.ts";

/** Where the counters are kept: the storage plugin (its `addUsage` and `readUsage`), or this memory store. */
export interface UsageStore {
  addUsage(deltas: readonly UsageDelta[]): Promise<void>;
  readUsage(range: UsageRange): Promise<UsageRow[]>;
}

/** Adds `delta`'s counts to `into`'s. */
export function addCounts(into: UsageCounts, delta: UsageCounts): void {
  into.requests += delta.requests;
  into.errors += delta.errors;
  into.inputTokens += delta.inputTokens;
  into.outputTokens += delta.outputTokens;
  into.costNanoUsd += delta.costNanoUsd;
}

/**
 * The key of one hour, app, developer and model: the hour has a fixed width and the app and
 * developer their length in front, so no two label sets share one, whatever their characters.
 */
export function usageKey(hour: string, app: string, developer: string, model: string): string {
  return `${hour}${app.length}:${app}${developer.length}:${developer}${model}`;
}

export function createMemoryUsageStore(): UsageStore {
  /** Day → key → row. */
  const days = new Map<string, Map<string, UsageRow>>();

  function dayRows(day: string): Map<string, UsageRow> {
    let rows = days.get(day);
    if (rows === undefined) {
      const oldest = oldestUsageDay();
      for (const kept of days.keys()) if (kept < oldest) days.delete(kept);
      days.set(day, (rows = new Map()));
    }
    return rows;
  }

  return {
    async addUsage(deltas) {
      for (const delta of deltas) {
        const rows = dayRows(delta.hour.slice(0, 10));
        const key = usageKey(delta.hour, delta.app, delta.developer, delta.model);
        const row = rows.get(key);
        if (row) addCounts(row, delta);
        else rows.set(key, { ...delta });
      }
    },
    async readUsage(range) {
      return usageDays(range).flatMap((day) => [...(days.get(day)?.values() ?? [])].map((row) => ({ ...row })));
    },
  };
}
