/**
 * A Prometheus histogram counted in plain rows (README, "Metrics"), as `metric-series.ts` does for
 * the counters: an observation finds its row by the identity of its labels object (each request
 * row and target row makes its labels once) and adds 1 to one bucket. prom-client's `Histogram`
 * hashes the labels on every `observe` (about 1.5 µs a request for the three histograms); here the
 * rows are turned into prom-client's histogram values only when `/metrics` is scraped. Rows whose
 * labels are equal (two request rows that differ only in status) are added up then. It is no
 * prom-client `Histogram` (no `labels()`, `startTimer()`): a caller keeps one labels object per
 * tuple, as the bounded rows of `metric-series.ts` do, or its rows grow with every call.
 */
import type { Registry } from "prom-client";

/** One line of the exposition, as prom-client's registry formats it. */
interface Sample {
  metricName: string;
  labels: Record<string, string | number>;
  value: number;
}

/** One label tuple's observations: a count per bucket (not cumulative), their sum and count. */
interface Row {
  labels: Readonly<Record<string, string>>;
  counts: Float64Array;
  sum: number;
  count: number;
}

/** What prom-client's `Registry` asks of a metric: its name, help, type and, when scraped, its values. */
export class BucketHistogram<L extends string> {
  readonly type = "histogram";
  readonly aggregator = "sum";
  private readonly rows = new Map<object, Row>();

  /**
   * @param buckets the upper bounds, ascending; `+Inf` is added
   * @param registry where it is shown (one per router, never the global one)
   */
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly buckets: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** Counts `value` for `labels`: pass the same object for the same tuple, as the rows keep theirs. */
  observe(labels: Readonly<Record<L, string>>, value: number): void {
    let row = this.rows.get(labels);
    if (row === undefined) {
      row = { labels, counts: new Float64Array(this.buckets.length + 1), sum: 0, count: 0 };
      this.rows.set(labels, row);
    }
    const { buckets } = this;
    let i = 0;
    while (i < buckets.length && value > buckets[i]!) i++;
    row.counts[i]!++;
    row.sum += value;
    row.count++;
  }

  /** Forgets every observation (`registry.resetMetrics()`). */
  reset(): void {
    this.rows.clear();
  }

  /** prom-client's form of the histogram: per label tuple, the cumulative buckets, `_sum` and `_count`. */
  get(): { name: string; help: string; type: "histogram"; aggregator: "sum"; values: Sample[] } {
    const merged = new Map<string, Row>();
    for (const row of this.rows.values()) {
      const key = JSON.stringify(Object.entries(row.labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
      const into = merged.get(key);
      if (into === undefined) {
        merged.set(key, { labels: row.labels, counts: Float64Array.from(row.counts), sum: row.sum, count: row.count });
        continue;
      }
      for (let i = 0; i < row.counts.length; i++) into.counts[i]! += row.counts[i]!;
      into.sum += row.sum;
      into.count += row.count;
    }
    const values: Sample[] = [];
    for (const { labels, counts, sum, count } of merged.values()) {
      let cumulative = 0;
      for (let i = 0; i <= this.buckets.length; i++) {
        cumulative += counts[i]!;
        const le = i < this.buckets.length ? this.buckets[i]! : "+Inf";
        values.push({ metricName: `${this.name}_bucket`, labels: { le, ...labels }, value: cumulative });
      }
      values.push({ metricName: `${this.name}_sum`, labels: { ...labels }, value: sum });
      values.push({ metricName: `${this.name}_count`, labels: { ...labels }, value: count });
    }
    return { name: this.name, help: this.help, type: "histogram", aggregator: "sum", values };
  }
}
