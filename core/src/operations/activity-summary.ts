/**
 * What the status page shows of the activity window (`activity.ts`, README "Status page"), for the
 * last hour or the last day: the request rate as a series, latency percentiles, errors by code,
 * and requests, tokens and cost by app and by model (`usageTotals`, the one place the page's usage
 * figures come from until the shared usage counters serve them).
 */
import type { ActivityCell, ActivityWindow, TargetCounts } from "./activity.ts";
import { LATENCY_BINS, addHistogram, latencyPercentile } from "./latency-histogram.ts";

export type ActivityRange = "hour" | "day";

/** Each range's length and the width of its series' steps, in minutes. */
export const RANGES: Readonly<Record<ActivityRange, { minutes: number; step: number }>> = {
  hour: { minutes: 60, step: 1 },
  day: { minutes: 1440, step: 10 },
};

export interface LatencyPercentiles {
  p50: number | null;
  p90: number | null;
  p99: number | null;
}

/** One step of a range's series. */
export interface SeriesPoint extends LatencyPercentiles {
  /** The step's start, Unix seconds. */
  t: number;
  requests: number;
  errors: number;
}

export interface RangeSummary {
  minutes: number;
  step_s: number;
  requests: number;
  errors: number;
  /** Requests per minute over the range. */
  rate_per_min: number;
  latency_ms: LatencyPercentiles;
  errors_by_code: Record<string, number>;
  /** Every step of the range, oldest first, empty ones included. */
  series: SeriesPoint[];
}

/** Requests, errors, tokens and cost of one app or one model. */
export interface UsageRow {
  name: string;
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number;
}

export interface UsageTotals {
  /** Whose requests the figures count: `router` (this process's activity window) or `shared` (every router's usage counters). */
  scope: "router" | "shared";
  by_app: UsageRow[];
  by_model: UsageRow[];
}

/** Where the page's usage figures come from: this router's window by default (`usageTotals`). */
export type UsageSource = (range: ActivityRange) => UsageTotals | Promise<UsageTotals>;

function percentiles(counts: Uint32Array | readonly number[]): LatencyPercentiles {
  const round = (value: number | null) => (value === null ? null : Math.round(value * 100) / 100);
  return { p50: round(latencyPercentile(counts, 0.5)), p90: round(latencyPercentile(counts, 0.9)), p99: round(latencyPercentile(counts, 0.99)) };
}

/**
 * The last hour's or day's activity.
 * @example summarize(activity, "hour").latency_ms.p99
 */
export function summarize(activity: ActivityWindow, range: ActivityRange): RangeSummary {
  const { minutes, step } = RANGES[range];
  const last = activity.currentMinute();
  const first = last - minutes + 1;
  const steps = Math.ceil(minutes / step);
  const series: SeriesPoint[] = [];
  const stepLatency: Uint32Array[] = [];
  for (let i = 0; i < steps; i++) {
    series.push({ t: (first + i * step) * 60, requests: 0, errors: 0, p50: null, p90: null, p99: null });
    stepLatency.push(new Uint32Array(LATENCY_BINS));
  }
  const latency = new Uint32Array(LATENCY_BINS);
  const errorsByCode: Record<string, number> = {};
  let requests = 0;
  let errors = 0;
  for (const bucket of activity.buckets(minutes, last)) {
    const i = Math.floor((bucket.minute - first) / step);
    series[i]!.requests += bucket.requests;
    series[i]!.errors += bucket.errors;
    addHistogram(stepLatency[i]!, bucket.latency);
    addHistogram(latency, bucket.latency);
    requests += bucket.requests;
    errors += bucket.errors;
    for (const cell of bucket.cells.values()) if (cell.code !== "") errorsByCode[cell.code] = (errorsByCode[cell.code] ?? 0) + cell.requests;
  }
  series.forEach((point, i) => Object.assign(point, percentiles(stepLatency[i]!)));
  return {
    minutes,
    step_s: step * 60,
    requests,
    errors,
    rate_per_min: Math.round((requests / minutes) * 100) / 100,
    latency_ms: percentiles(latency),
    errors_by_code: errorsByCode,
    series,
  };
}

function addTo(rows: Map<string, UsageRow>, name: string, cell: ActivityCell): void {
  let row = rows.get(name);
  if (row === undefined) rows.set(name, (row = { name, requests: 0, errors: 0, prompt_tokens: 0, completion_tokens: 0, cost_usd: 0 }));
  row.requests += cell.requests;
  if (cell.code !== "") row.errors += cell.requests;
  row.prompt_tokens += cell.promptTokens;
  row.completion_tokens += cell.completionTokens;
  row.cost_usd += cell.cost;
}

/** Most requests first, then by name. */
function sorted(rows: Map<string, UsageRow>): UsageRow[] {
  return [...rows.values()].sort((a, b) => b.requests - a.requests || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Requests, errors, tokens and cost by app and by model over the last hour or day, as this
 * router's activity window counted them.
 */
export function usageTotals(activity: ActivityWindow, range: ActivityRange): UsageTotals {
  const byApp = new Map<string, UsageRow>();
  const byModel = new Map<string, UsageRow>();
  for (const bucket of activity.buckets(RANGES[range].minutes)) {
    for (const cell of bucket.cells.values()) {
      addTo(byApp, cell.app, cell);
      addTo(byModel, cell.model, cell);
    }
  }
  return { scope: "router", by_app: sorted(byApp), by_model: sorted(byModel) };
}

/** Each target's upstream attempts and failures over the last `minutes`, for its health. */
export function recentTargets(activity: ActivityWindow, minutes: number): Map<string, TargetCounts> {
  const counts = new Map<string, TargetCounts>();
  for (const bucket of activity.buckets(minutes)) {
    for (const [target, minute] of bucket.targets) {
      let count = counts.get(target);
      if (count === undefined) counts.set(target, (count = { attempts: 0, failures: 0 }));
      count.attempts += minute.attempts;
      count.failures += minute.failures;
    }
  }
  return counts;
}
