/**
 * The reply of `GET /v1/usage` (README, "Usage"): the hourly rows of the store added up per
 * interval (hour, day, or the whole range) and per the groups asked for, sorted by time and then by
 * the groups in the order given. Only what was counted has a row: a quiet day has none.
 */
import type { UsageCounts, UsageRow } from "../plugins/storage-contract.ts";
import { addCounts } from "./memory-usage-store.ts";
import type { UsageGroup, UsageQuery } from "./usage-query.ts";

export interface UsageReportRow {
  /** `interval=day`: the UTC day. */
  date?: string;
  /** `interval=hour`: the UTC hour, `YYYY-MM-DDTHH`. */
  hour?: string;
  app?: string;
  developer?: string;
  /** The provider of the model: what comes before its first `/`. */
  provider?: string;
  /** The served `provider/model`. */
  model?: string;
  requests: number;
  errors: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

export interface UsageReport {
  object: "list";
  start: string;
  end: string;
  interval: UsageQuery["interval"];
  group_by: UsageGroup[];
  data: UsageReportRow[];
}

function label(row: UsageRow, group: UsageGroup): string {
  if (group === "provider") {
    const slash = row.model.indexOf("/");
    return slash < 0 ? row.model : row.model.slice(0, slash);
  }
  return row[group];
}

function timeOf(row: UsageRow, interval: UsageQuery["interval"]): string {
  return interval === "hour" ? row.hour : interval === "day" ? row.hour.slice(0, 10) : "";
}

interface Bucket {
  time: string;
  labels: string[];
  counts: UsageCounts;
}

function compare(a: Bucket, b: Bucket): number {
  if (a.time !== b.time) return a.time < b.time ? -1 : 1;
  for (let i = 0; i < a.labels.length; i++) if (a.labels[i] !== b.labels[i]) return a.labels[i]! < b.labels[i]! ? -1 : 1;
  return 0;
}

export function usageReport(rows: readonly UsageRow[], query: UsageQuery): UsageReport {
  const { start, end, interval, groupBy } = query;
  const buckets = new Map<string, Bucket>();
  for (const row of rows) {
    const day = row.hour.slice(0, 10);
    // A plugin may hand more than the range; only the range is answered.
    if (day < start || day > end) continue;
    const time = timeOf(row, interval);
    const labels = groupBy.map((group) => label(row, group));
    const key = JSON.stringify([time, ...labels]);
    let bucket = buckets.get(key);
    if (bucket === undefined) {
      bucket = { time, labels, counts: { requests: 0, errors: 0, inputTokens: 0, outputTokens: 0, costNanoUsd: 0 } };
      buckets.set(key, bucket);
    }
    addCounts(bucket.counts, row);
  }
  const data = [...buckets.values()].sort(compare).map(({ time, labels, counts }) => {
    // Built in the order a reader scans a row: when, who, then the counts.
    const reply: Record<string, string | number> = {};
    if (interval === "day") reply.date = time;
    else if (interval === "hour") reply.hour = time;
    groupBy.forEach((group, i) => (reply[group] = labels[i]!));
    reply.requests = counts.requests;
    reply.errors = counts.errors;
    reply.input_tokens = counts.inputTokens;
    reply.output_tokens = counts.outputTokens;
    // Nano-dollars are integers; dollars are shown to the nano-dollar.
    reply.cost_usd = Number((counts.costNanoUsd / 1e9).toFixed(9));
    return reply as unknown as UsageReportRow;
  });
  return { object: "list", start, end, interval, group_by: groupBy, data };
}
