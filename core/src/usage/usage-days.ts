/**
 * The time of usage counters (README, "Usage"): UTC hours (`2026-11-25T13`) and days
 * (`2026-11-25`), how long counters are kept, and the days of a range. Shared by the core's memory
 * store, the endpoint and storage plugins (exported by `@modelmux/core`).
 */
import type { UsageRange } from "../plugins/storage-contract.ts";

/** How long counters are kept, in days: a year back from today, and a little more. */
export const USAGE_RETENTION_DAYS = 400;
/** The most days one `GET /v1/usage` (and so one `readUsage`) covers. */
export const MAX_USAGE_DAYS = 366;

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The UTC hour of `ms`: `YYYY-MM-DDTHH`. */
export function hourOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 13);
}

/** The UTC day of `ms`: `YYYY-MM-DD`. */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The start of a `YYYY-MM-DD` UTC day in ms; undefined for anything else (`2026-02-30` too). */
export function dayStart(day: string): number | undefined {
  const match = DAY.exec(day);
  if (!match) return undefined;
  const ms = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  // Date.UTC rolls 02-30 over into March, and maps years 0-99 to 1900-1999: the day must come back the same.
  return dayOf(ms) === day ? ms : undefined;
}

/**
 * Every day of `range`, in order (none when it is not two days in order, or spans more than
 * `MAX_USAGE_DAYS`).
 * @example usageDays({ firstDay: "2026-02-27", lastDay: "2026-03-01" }) // ["2026-02-27", "2026-02-28", "2026-03-01"]
 */
export function usageDays(range: UsageRange): string[] {
  const first = dayStart(range.firstDay);
  const last = dayStart(range.lastDay);
  if (first === undefined || last === undefined || last < first || (last - first) / DAY_MS >= MAX_USAGE_DAYS) return [];
  const days: string[] = [];
  for (let ms = first; ms <= last; ms += DAY_MS) days.push(dayOf(ms));
  return days;
}

/** The oldest day still kept at `now`: counters of earlier days may be dropped. */
export function oldestUsageDay(now = Date.now()): string {
  return dayOf(now - (USAGE_RETENTION_DAYS - 1) * DAY_MS);
}
