/** The metrics' histograms, counted in rows: the same Prometheus text as prom-client's own `Histogram`. */
import { Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { BucketHistogram } from "../src/operations/bucket-histogram.ts";

const BUCKETS = [0.005, 0.01, 0.1, 1, 10];
const OBSERVED: Array<[labels: { provider: string; model: string }, seconds: number]> = [
  [{ provider: "a", model: "m1" }, 0.003],
  [{ provider: "a", model: "m1" }, 0.005],
  [{ provider: "a", model: "m1" }, 0.2],
  [{ provider: "b", model: "m2" }, 42],
  [{ provider: "a", model: "m1" }, 9.99],
];

describe("BucketHistogram", () => {
  it("writes what prom-client's Histogram writes for the same observations", async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const histogram = new BucketHistogram<"provider" | "model">("x_seconds", "Some time.", BUCKETS, ours);
    const reference = new Histogram({ name: "x_seconds", help: "Some time.", labelNames: ["provider", "model"], buckets: BUCKETS, registers: [theirs] });
    // The rows keep one labels object per tuple, as the metric rows do.
    const rows = new Map<string, { provider: string; model: string }>();
    for (const [labels, seconds] of OBSERVED) {
      const key = `${labels.provider}/${labels.model}`;
      if (!rows.has(key)) rows.set(key, labels);
      histogram.observe(rows.get(key)!, seconds);
      reference.observe(labels, seconds);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it("adds up rows whose labels are equal, and shows nothing before the first observation", async () => {
    const registry = new Registry();
    const histogram = new BucketHistogram<"endpoint">("y_seconds", "Other time.", BUCKETS, registry);
    expect(await registry.metrics()).toBe("# HELP y_seconds Other time.\n# TYPE y_seconds histogram\n");
    histogram.observe({ endpoint: "/v1/chat/completions" }, 0.05);
    histogram.observe({ endpoint: "/v1/chat/completions" }, 2);
    const text = await registry.metrics();
    expect(text).toContain('y_seconds_bucket{le="0.1",endpoint="/v1/chat/completions"} 1\n');
    expect(text).toContain('y_seconds_bucket{le="+Inf",endpoint="/v1/chat/completions"} 2\n');
    expect(text).toContain('y_seconds_count{endpoint="/v1/chat/completions"} 2\n');
    expect(text.match(/_count/g)).toHaveLength(1);
  });
});

describe("BucketHistogram and the registry", () => {
  it("is emptied by registry.resetMetrics(), as prom-client's histograms are", async () => {
    const registry = new Registry();
    const histogram = new BucketHistogram<"provider">("z_seconds", "Time.", BUCKETS, registry);
    histogram.observe({ provider: "a" }, 1);
    registry.resetMetrics();
    expect(await registry.metrics()).toBe("# HELP z_seconds Time.\n# TYPE z_seconds histogram\n");
  });
});
