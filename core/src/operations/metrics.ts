/**
 * The router's metrics (README, "Metrics"), served as Prometheus text by `GET /metrics`: one
 * prom-client `Registry` per router, never the global one (several routers may share a process).
 * Requests are counted by the `metrics` middleware once their reply has ended
 * (`metrics-request.ts`) into plain rows (`metric-series.ts`); the counters and gauges here read
 * those rows when scraped, and so do the histograms (`bucket-histogram.ts`).
 */
import { collectDefaultMetrics, Counter, Gauge, Registry } from "prom-client";
import { BucketHistogram } from "./bucket-histogram.ts";
import type { ModelEntry } from "../models/model-table.ts";
import type { RefusalScope } from "../rate-limit/acquire.ts";
import type { CircuitBreakers, CircuitState } from "../routing/circuit-breaker.ts";
import type { EndListener, StreamListener } from "../server/exchange.ts";
import { countRequest } from "./metrics-request.ts";
import { MetricSeries, type DurationLabel, type TargetLabels } from "./metric-series.ts";
import type { Pricing } from "./pricing.ts";

/** Seconds, from a few milliseconds (a refusal, a cached answer) to the ten minutes of a long stream. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120, 300, 600];

/** The circuit gauge's values. */
const CIRCUIT_VALUE: Record<CircuitState, number> = { closed: 0, "half-open": 1, open: 2 };

export interface MetricsOptions {
  /** The configured models: each one's circuit is shown, and its provider and model are labels. */
  models: { entries: readonly ModelEntry[] };
  breakers: CircuitBreakers;
  /** What each request cost: `modelmux_cost_usd_total`. */
  pricing: Pricing;
  /** The configured keys: their apps and developers always have their own label values. */
  keys?: readonly { app: string; developer: string }[];
  /** The most other values (a token's claims, a provider's error code) a capped label takes; past it, `other`. Default 100. */
  maxLabelValues?: number;
  /** Node's process metrics too (CPU, memory, event loop lag, GC), prefixed `modelmux_`. Default false. */
  processMetrics?: boolean;
}

/** The histograms a request feeds as it ends. */
export interface Timings {
  duration: BucketHistogram<DurationLabel>;
  upstream: BucketHistogram<keyof TargetLabels>;
  ttft: BucketHistogram<keyof TargetLabels>;
}

/** One router's metrics: kept on `AppContext` as `metrics`. */
export class RouterMetrics {
  readonly registry = new Registry();
  readonly series: MetricSeries;
  readonly timings: Timings;
  readonly pricing: Pricing;

  /** A request entered the `metrics` middleware. */
  readonly requestStarted = (): void => void this.series.inFlight++;
  /** An SSE reply's head went to the client. */
  readonly streamStarted: StreamListener = () => void this.series.openStreams++;
  /** A request's reply has ended. */
  readonly requestEnded: EndListener = (x, status) => countRequest(this, x, status);
  /** A rate limit of the router refused a request (`RateLimits.onRefusal`). */
  readonly refused = (scope: RefusalScope): void => void this.series.refusals[scope]++;

  constructor(options: MetricsOptions) {
    const { models, breakers } = options;
    this.pricing = options.pricing;
    this.series = new MetricSeries(models.entries, options.keys ?? [], options.maxLabelValues ?? 100);
    const registers = [this.registry];
    const histogram = <L extends string>(name: string, help: string) => new BucketHistogram<L>(name, help, LATENCY_BUCKETS, this.registry);
    const series = this.series;
    const counter = <L extends string>(name: string, help: string, labelNames: readonly L[], fill: (counter: Counter<L>) => void) =>
      new Counter<L>({
        name,
        help,
        labelNames,
        registers,
        collect() {
          this.reset();
          fill(this);
        },
      });
    counter("modelmux_requests_total", "Requests, once their reply has ended.", ["method", "endpoint", "provider", "model", "status", "code", "outcome", "stream"], (c) => {
      for (const row of series.requests.values()) c.inc(row.labels, row.count);
    });
    this.timings = {
      // Labels: method, endpoint, provider, model, stream, outcome (`RequestRow.duration`).
      duration: histogram<DurationLabel>("modelmux_request_duration_seconds", "Time from a request's arrival to the end of its reply (a stream's last byte)."),
      upstream: histogram<keyof TargetLabels>("modelmux_upstream_duration_seconds", "The answering attempt's time: the whole reply, or a stream's first content."),
      ttft: histogram<keyof TargetLabels>("modelmux_time_to_first_token_seconds", "Time from a stream's arrival to its head, which leaves with its first content."),
    };
    counter("modelmux_tokens_total", "Tokens the providers reported, by kind.", ["app", "developer", "provider", "model", "kind"], (c) => {
      for (const row of series.usage.values()) {
        c.inc({ ...row.labels, kind: "input" }, row.input);
        c.inc({ ...row.labels, kind: "output" }, row.output);
      }
    });
    counter("modelmux_cost_usd_total", "What the requests cost in USD, at the config's pricing.", ["app", "developer", "provider", "model"], (c) => {
      for (const row of series.usage.values()) if (row.priced) c.inc(row.labels, row.cost);
    });
    const tried = () => [...series.targets.values()].filter((row) => row.tried);
    counter("modelmux_upstream_attempts_total", "Attempts per target, by how each ended (skipped: not tried).", ["provider", "model", "outcome"], (c) => {
      for (const row of tried()) {
        for (const [outcome, count] of Object.entries(row.attempts)) if (count > 0) c.inc({ ...row.labels, outcome }, count);
      }
    });
    counter("modelmux_retries_total", "Attempts on a target that a request had tried already.", ["provider", "model"], (c) => {
      for (const row of tried()) c.inc(row.labels, row.retries);
    });
    counter("modelmux_fallbacks_total", "Attempts on a target other than the request's first.", ["provider", "model"], (c) => {
      for (const row of tried()) c.inc(row.labels, row.fallbacks);
    });
    counter("modelmux_continuations_total", "Streams of this target that broke mid-way and were attempted again to continue them.", ["provider", "model"], (c) => {
      for (const row of tried()) c.inc(row.labels, row.continuations);
    });
    counter("modelmux_rate_limit_refusals_total", "Requests and attempts the router's rate limits refused, by the scope of the limit.", ["scope"], (c) => {
      for (const [scope, count] of Object.entries(series.refusals)) c.inc({ scope }, count);
    });
    new Gauge({
      name: "modelmux_circuit_state",
      help: "Each target's circuit: 0 closed, 1 half-open, 2 open.",
      labelNames: ["provider", "model"],
      registers,
      collect() {
        const states = breakers.states();
        for (const row of series.targets.values()) this.set(row.labels, CIRCUIT_VALUE[states.get(row.name) ?? "closed"]);
      },
    });
    const gauge = (name: string, help: string, value: () => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(value());
        },
      });
    gauge("modelmux_in_flight_requests", "Requests whose reply has not ended.", () => series.inFlight);
    gauge("modelmux_open_streams", "SSE replies whose head is written and whose end is not.", () => series.openStreams);
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry, prefix: "modelmux_" });
  }

  /** The Prometheus text of every series. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  /** The content type of `text()`: `text/plain; version=0.0.4; charset=utf-8`. */
  get contentType(): string {
    return this.registry.contentType;
  }
}
