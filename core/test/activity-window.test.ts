/**
 * The activity window (core/src/operations/activity.ts) and its summaries (activity-summary.ts) on an
 * injected clock: per-minute series over the hour and the day, latency percentiles from the fixed
 * histogram, errors by code, requests, tokens and cost by app and model, a day-old minute dropped
 * as the ring turns, and the caps that keep its memory bounded.
 */
import { describe, expect, it } from "vitest";
import { ActivityWindow, type ActivitySample } from "../src/operations/activity.ts";
import { recentTargets, summarize, usageTotals } from "../src/operations/activity-summary.ts";
import type { AttemptRecord } from "../src/routing/types.ts";
import { LATENCY_BINS, latencyBin, latencyPercentile } from "../src/operations/latency-histogram.ts";

const MINUTE = 60_000;
/** A whole minute, so the series' steps start where the test expects. */
const START = 29_000_000 * MINUTE;

function setup(options = {}) {
  const clock = { now: START };
  return { clock, window: new ActivityWindow({ now: () => clock.now, ...options }) };
}

const sample = (over: Partial<ActivitySample> = {}): ActivitySample => ({
  app: "web",
  model: "openai/gpt-4o",
  code: "",
  latencyMs: 100,
  promptTokens: 10,
  completionTokens: 5,
  cost: 0.001,
  ...over,
});

describe("the latency histogram", () => {
  it("puts each latency in the first bin whose bound holds it, the longest in the last", () => {
    expect(latencyBin(0)).toBe(0);
    expect(latencyBin(0.25)).toBe(0);
    expect(latencyBin(0.26)).toBe(1);
    expect(latencyBin(0.5)).toBe(2);
    expect(latencyBin(0.51)).toBe(3);
    expect(latencyBin(1000)).toBe(24);
    expect(latencyBin(Number.NaN)).toBe(0);
    expect(latencyBin(1e12)).toBe(LATENCY_BINS - 1);
    for (let ms = 0.3; ms < 200_000; ms *= 1.37) {
      const bin = latencyBin(ms);
      expect(0.25 * Math.SQRT2 ** bin, `${ms}`).toBeGreaterThanOrEqual(ms);
      expect(0.25 * Math.SQRT2 ** (bin - 1), `${ms}`).toBeLessThan(ms);
    }
  });

  it("reads percentiles within one bin of the true value, and null for nothing counted", () => {
    const counts = new Uint32Array(LATENCY_BINS);
    expect(latencyPercentile(counts, 0.5)).toBeNull();
    const latencies = Array.from({ length: 1000 }, (_, i) => 10 + i);
    for (const ms of latencies) counts[latencyBin(ms)]!++;
    for (const [q, exact] of [[0.5, 509], [0.9, 909], [0.99, 999]] as const) {
      const read = latencyPercentile(counts, q)!;
      expect(read / exact).toBeGreaterThan(1 / Math.SQRT2);
      expect(read / exact).toBeLessThan(Math.SQRT2);
    }
  });
});

describe("the activity window", () => {
  it("sums the last hour per minute: requests, errors, latency, errors by code", () => {
    const { clock, window } = setup();
    window.record(sample({ latencyMs: 10 }));
    window.record(sample({ latencyMs: 10 }));
    clock.now += 5 * MINUTE;
    window.record(sample({ code: "model_not_found", model: "-", promptTokens: 0, completionTokens: 0, cost: undefined, latencyMs: 1 }));
    window.record(sample({ code: "upstream_error", latencyMs: 2000 }));
    const hour = summarize(window, "hour");
    expect(hour).toMatchObject({ minutes: 60, step_s: 60, requests: 4, errors: 2, errors_by_code: { model_not_found: 1, upstream_error: 1 } });
    expect(hour.rate_per_min).toBeCloseTo(4 / 60);
    expect(hour.series).toHaveLength(60);
    expect(hour.series.at(-1)).toMatchObject({ t: (START + 5 * MINUTE) / 1000, requests: 2, errors: 2 });
    expect(hour.series.at(-6)).toMatchObject({ t: START / 1000, requests: 2, errors: 0 });
    expect(hour.series.filter((point) => point.requests > 0)).toHaveLength(2);
    expect(hour.latency_ms.p50).toBeGreaterThan(7);
    expect(hour.latency_ms.p50).toBeLessThanOrEqual(11.32);
    expect(hour.latency_ms.p99).toBeGreaterThan(1400);
  });

  it("gives requests, errors, tokens and cost by app and by model, most requests first", () => {
    const { window } = setup();
    for (let i = 0; i < 3; i++) window.record(sample({ app: "web", promptTokens: 7, completionTokens: 3, cost: 0.5 }));
    window.record(sample({ app: "batch", model: "echo/echo-1", promptTokens: 1, completionTokens: 2, cost: undefined }));
    window.record(sample({ app: "batch", model: "-", code: "model_not_found", promptTokens: 0, completionTokens: 0, cost: undefined }));
    const totals = usageTotals(window, "day");
    expect(totals.scope).toBe("router");
    expect(totals.by_app).toEqual([
      { name: "web", requests: 3, errors: 0, prompt_tokens: 21, completion_tokens: 9, cost_usd: 1.5 },
      { name: "batch", requests: 2, errors: 1, prompt_tokens: 1, completion_tokens: 2, cost_usd: 0 },
    ]);
    expect(totals.by_model.map((row) => [row.name, row.requests, row.errors])).toEqual([
      ["openai/gpt-4o", 3, 0],
      ["-", 1, 1],
      ["echo/echo-1", 1, 0],
    ]);
  });

  it("counts each target's upstream attempts and failures, fallbacks' included, skipped ones not", () => {
    const { clock, window } = setup();
    const attempt = (target: string, outcome: AttemptRecord["outcome"]): AttemptRecord => ({ target, outcome, durationMs: 5, waitMs: 0 });
    window.record(sample({ attempts: [attempt("openai/gpt-4o", "ok")] }));
    window.record(sample({ model: "echo/echo-1", attempts: [attempt("openai/gpt-4o", "retryable"), attempt("openai/gpt-4o", "timeout"), attempt("echo/echo-1", "ok")] }));
    window.record(sample({ model: "echo/echo-1", attempts: [attempt("openai/gpt-4o", "skipped"), attempt("echo/echo-1", "final")] }));
    window.record(sample({ model: "-", code: "model_not_found" }));
    expect(Object.fromEntries(recentTargets(window, 5))).toEqual({ "openai/gpt-4o": { attempts: 3, failures: 2 }, "echo/echo-1": { attempts: 2, failures: 0 } });
    clock.now += 5 * MINUTE;
    expect(recentTargets(window, 5).size).toBe(0);
    expect(recentTargets(window, 6).get("openai/gpt-4o")).toEqual({ attempts: 3, failures: 2 });
  });

  it("keeps a day: an hour-old minute is in the day only, a day-old one is gone when its slot is reused", () => {
    const { clock, window } = setup();
    window.record(sample());
    clock.now += 90 * MINUTE;
    window.record(sample());
    expect(summarize(window, "hour").requests).toBe(1);
    const day = summarize(window, "day");
    expect(day).toMatchObject({ minutes: 1440, step_s: 600, requests: 2 });
    expect(day.series).toHaveLength(144);
    clock.now = START + 1440 * MINUTE;
    expect(summarize(window, "day").requests).toBe(1);
    window.record(sample({ app: "later" }));
    expect(usageTotals(window, "day").by_app.map((row) => [row.name, row.requests])).toEqual([
      ["later", 1],
      ["web", 1],
    ]);
    expect(window.buckets(1440)).toHaveLength(2);
  });

  it("caps the distinct apps and the cells of a minute: past them, `other`; the minute's totals stay exact", () => {
    const { window } = setup({ maxApps: 2, maxCellsPerMinute: 4 });
    for (const app of ["a", "b", "c", "d"]) window.record(sample({ app }));
    expect(usageTotals(window, "hour").by_app.map((row) => [row.name, row.requests])).toEqual([
      ["other", 2],
      ["a", 1],
      ["b", 1],
    ]);
    for (const code of ["c1", "c2", "c3", "c4"]) window.record(sample({ app: "a", code }));
    const hour = summarize(window, "hour");
    expect(hour.requests).toBe(8);
    expect(hour.errors).toBe(4);
    expect(window.buckets(1)[0]!.cells.size).toBeLessThanOrEqual(5);
    expect(hour.errors_by_code).toEqual({ c1: 1, other: 3 });
  });
});
