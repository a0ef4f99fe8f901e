/**
 * Usage counters on the memory and fs drivers (docs/plugins.md, "Usage counters"): one value per
 * UTC day, `usage:<YYYY-MM-DD>` (`<prefix>/usage/<day>` on fs), holding the day's rows as JSON,
 * `{"v":1,"rows":[[HH, app, developer, model, requests, errors, input, output, cost], …]}`. A flush
 * reads, adds and rewrites each day it touches under that day's mutex, and fs writes a file whole
 * (a temporary file renamed over it), so a reader never sees half a day. The mutex is in-process:
 * one router per fs folder, as for stored completions. Days before `oldestUsageDay` (400 days
 * back) are removed once a day, in the background.
 */
import { oldestUsageDay, usageDays, type UsageDelta, type UsageRow } from "@modelmux/core";
import type { KvStore } from "./kv-store.ts";
import type { KeyedMutex } from "./mutex.ts";
import { splitHour, type UsageStorage } from "./usage-shape.ts";

type StoredRow = [hh: string, app: string, developer: string, model: string, requests: number, errors: number, input: number, output: number, cost: number];

const keyOf = (day: string) => `usage:${day}`;
const rowKey = (row: StoredRow) => JSON.stringify(row.slice(0, 4));

function decodeDay(text: string | undefined): StoredRow[] {
  if (text === undefined) return [];
  try {
    const { rows } = JSON.parse(text) as { rows?: unknown };
    return Array.isArray(rows) ? (rows as StoredRow[]) : [];
  } catch {
    return [];
  }
}

export function kvUsage(store: KvStore, locks: KeyedMutex, later: (what: string, task: () => Promise<void>) => void): UsageStorage {
  /** The day the last sweep ran for: one sweep a day, whatever the number of flushes. */
  let swept = "";

  function sweep(today: string, oldest: string): void {
    if (swept === today) return;
    swept = today;
    later("removing usage counters past their retention", async () => {
      for (const day of await store.list("usage")) if (day < oldest) await locks.run(keyOf(day), () => store.remove(keyOf(day)));
    });
  }

  return {
    async addUsage(deltas) {
      const now = Date.now();
      const oldest = oldestUsageDay(now);
      const byDay = new Map<string, UsageDelta[]>();
      for (const delta of deltas) {
        const [day] = splitHour(delta.hour);
        // Past the retention: it would be removed at once.
        if (day < oldest) continue;
        byDay.get(day)?.push(delta) ?? byDay.set(day, [delta]);
      }
      await Promise.all(
        [...byDay].map(([day, dayDeltas]) =>
          locks.run(keyOf(day), async () => {
            const rows = new Map(decodeDay(await store.get(keyOf(day))).map((row) => [rowKey(row), row]));
            for (const d of dayDeltas) {
              const added: StoredRow = [d.hour.slice(11, 13), d.app, d.developer, d.model, d.requests, d.errors, d.inputTokens, d.outputTokens, d.costNanoUsd];
              const row = rows.get(rowKey(added));
              if (row === undefined) rows.set(rowKey(added), added);
              else for (let i = 4; i < 9; i++) (row[i] as number) += added[i] as number;
            }
            await store.set(keyOf(day), JSON.stringify({ v: 1, rows: [...rows.values()] }));
          }),
        ),
      );
      sweep(new Date(now).toISOString().slice(0, 10), oldest);
    },

    async readUsage(range) {
      const days = usageDays(range);
      const texts = await store.getMany(days.map(keyOf));
      return days.flatMap((day, i) =>
        decodeDay(texts[i]).map(
          ([hh, app, developer, model, requests, errors, inputTokens, outputTokens, costNanoUsd]): UsageRow => ({
            hour: `${day}T${hh}`,
            app,
            developer,
            model,
            requests,
            errors,
            inputTokens,
            outputTokens,
            costNanoUsd,
          }),
        ),
      );
    },
  };
}
