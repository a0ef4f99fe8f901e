/**
 * What the usage suites share (README, "Usage"): the admin's `GET /v1/usage`, the rows summed
 * over time (so a run that crosses an hour or midnight still compares exactly), and the expected
 * rows of known traffic.
 */
import { expect } from "vitest";
import type { Harness } from "./harness.ts";
import type { UsageReportRow } from "../../core/src/usage/usage-report.ts";

/** A row of `GET /v1/usage`, as the router's own report types it. */
export type UsageRow = UsageReportRow;

export interface UsageList {
  object: "list";
  start: string;
  end: string;
  interval: string;
  group_by: string[];
  data: UsageRow[];
}

/** `GET /v1/usage?<query>` with `key`; expects a 200 and returns its body. */
export async function readUsage(h: Harness, key: string, query = ""): Promise<UsageList> {
  const res = await h.request(`/v1/usage${query ? `?${query}` : ""}`, { headers: { authorization: `Bearer ${key}` } });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  expect(res.headers.get("cache-control")).toBe("no-store");
  return JSON.parse(text) as UsageList;
}

/** The UTC day and hour now. */
export const utcDay = (ms = Date.now()) => new Date(ms).toISOString().slice(0, 10);
export const utcHour = (ms = Date.now()) => new Date(ms).toISOString().slice(0, 13);

/**
 * The rows with their `date` or `hour` taken off and the rest added up per group, sorted like the
 * reply; each time checked to lie within `[from, to]`. Cost is rounded to the nano-dollar.
 */
export function overTime(rows: readonly UsageRow[], from: string, to: string): UsageRow[] {
  const sums = new Map<string, UsageRow>();
  for (const { date, hour, ...row } of rows) {
    const time = date ?? hour;
    if (time !== undefined) {
      expect(time >= from.slice(0, time.length) && time <= to.slice(0, time.length), `${time} within ${from}…${to}`).toBe(true);
    }
    const key = groupKey(row);
    const sum = sums.get(key);
    if (!sum) sums.set(key, { ...row });
    else {
      sum.requests += row.requests;
      sum.errors += row.errors;
      sum.input_tokens += row.input_tokens;
      sum.output_tokens += row.output_tokens;
      sum.cost_usd = Number((sum.cost_usd + row.cost_usd).toFixed(9));
    }
  }
  return sortedRows([...sums.values()]);
}

const groupKey = (row: UsageRow) => JSON.stringify([row.app, row.developer, row.provider, row.model]);

/** Rows in one order whatever they were made in: by their groups. */
export function sortedRows(rows: UsageRow[]): UsageRow[] {
  return [...rows].sort((a, b) => (groupKey(a) < groupKey(b) ? -1 : groupKey(a) > groupKey(b) ? 1 : 0));
}

/** The cost in USD of `usage` at `input` and `output` USD per million tokens, to the nano-dollar. */
export function costOf(usage: { prompt_tokens: number; completion_tokens: number }, input: number, output: number): number {
  return Math.round(usage.prompt_tokens * input * 1000 + usage.completion_tokens * output * 1000) / 1e9;
}
