/**
 * The query of `GET /v1/usage` (README, "Usage"): `start` and `end` (UTC days `YYYY-MM-DD`, both
 * inclusive; `end` defaults to today, `start` to `end`; at most 366 days), `group_by` (a comma
 * list of `app`, `developer`, `model`, `provider`; default none) and `interval` (`day` default,
 * `hour`, `total`). Anything else is a 400 naming the parameter, like the list queries.
 */
import { invalidRequest } from "../errors.ts";
import { DAY_MS, dayOf, dayStart, MAX_USAGE_DAYS } from "./usage-days.ts";

export const USAGE_GROUPS = ["app", "developer", "model", "provider"] as const;
export const USAGE_INTERVALS = ["day", "hour", "total"] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];
export type UsageInterval = (typeof USAGE_INTERVALS)[number];

export interface UsageQuery {
  start: string;
  end: string;
  /** In the order given, each once. */
  groupBy: UsageGroup[];
  interval: UsageInterval;
}

const PARAMS = new Set(["start", "end", "group_by", "interval"]);

/** A value as a message quotes it: short, whatever the client sent. */
const quoted = (value: string) => `'${value.length > 40 ? `${value.slice(0, 40)}…` : value}'`;

function day(param: string, value: string): number {
  const ms = dayStart(value);
  if (ms === undefined) throw invalidRequest(`${param}: must be a UTC day as YYYY-MM-DD, got ${quoted(value)}`, { param });
  return ms;
}

function groups(value: string): UsageGroup[] {
  const wanted: UsageGroup[] = [];
  for (const name of value.split(",")) {
    const group = name.trim();
    if (group === "") continue;
    if (!(USAGE_GROUPS as readonly string[]).includes(group)) {
      throw invalidRequest(`group_by: must be a comma-separated list of ${USAGE_GROUPS.join(", ")}, got ${quoted(group)}`, { param: "group_by" });
    }
    if (!wanted.includes(group as UsageGroup)) wanted.push(group as UsageGroup);
  }
  return wanted;
}

export function parseUsageQuery(params: URLSearchParams, now = Date.now()): UsageQuery {
  for (const key of params.keys()) {
    if (!PARAMS.has(key)) throw invalidRequest(`${key}: is not a known query parameter`, { code: "unknown_field", param: key });
    if (params.getAll(key).length > 1) throw invalidRequest(`${key}: must be given once`, { param: key });
  }
  const endText = params.get("end");
  const end = endText === null ? day("end", dayOf(now)) : day("end", endText);
  const startText = params.get("start");
  const start = startText === null ? end : day("start", startText);
  if (start > end) throw invalidRequest(`start: must not be after end (${dayOf(end)}), got ${quoted(startText ?? "")}`, { param: "start" });
  const days = (end - start) / DAY_MS + 1;
  if (days > MAX_USAGE_DAYS) throw invalidRequest(`end: at most ${MAX_USAGE_DAYS} days from start, got ${days}`, { param: "end" });
  const interval = params.get("interval") ?? "day";
  if (!(USAGE_INTERVALS as readonly string[]).includes(interval)) {
    throw invalidRequest(`interval: must be one of ${USAGE_INTERVALS.join(", ")}, got ${quoted(interval)}`, { param: "interval" });
  }
  return { start: dayOf(start), end: dayOf(end), groupBy: groups(params.get("group_by") ?? ""), interval: interval as UsageInterval };
}
