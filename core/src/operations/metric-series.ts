/**
 * The numbers behind the metrics (README, "Metrics"), kept per label tuple in plain rows: counting
 * a request is a few Map lookups and additions. prom-client hashes and checks the labels on every
 * `inc`, even through a cached `labels(...)` child (about 0.3 µs a call, a dozen calls a request);
 * here the rows are handed to its counters at scrape time instead (`metrics.ts`).
 *
 * Every label value is bounded: models and providers come from the config, apps and developers
 * from the keys; the values that can come from elsewhere (a token's app and developer claims, a
 * provider's error code) are capped: past `cap` distinct ones, `other`.
 */
import type { ModelEntry } from "../models/model-table.ts";
import type { RefusalScope } from "../rate-limit/acquire.ts";
import type { AttemptOutcome } from "../routing/types.ts";

/** The value of a label that does not apply: no model, no error, no caller. */
export const NONE = "none";
/** The value a label takes past its cap. */
export const OTHER = "other";
/** The endpoint label of a request on no route. */
export const UNMATCHED = "unmatched";

/** Joins label values into a row's key: a control character, which no capped value has. */
const SEP = "\u0001";
const CONTROL = /[\u0000-\u001f]/;

/**
 * The values one label may take: the configured ones always, then the first `cap` others in the
 * order they come; each later one is `other`.
 * @example
 * const developers = new CappedLabel(1, ["tester"]);
 * [developers.value("tester"), developers.value("alice"), developers.value("bob")] // ["tester", "alice", "other"]
 */
export class CappedLabel {
  private readonly known: Set<string>;
  private others = 0;

  constructor(
    private readonly cap: number,
    configured: Iterable<string> = [],
  ) {
    this.known = new Set(configured);
  }

  value(raw: string): string {
    if (this.known.has(raw)) return raw;
    // A control character could join two tuples' keys into one (`SEP`): no claim gets its own value with one.
    if (this.others >= this.cap || CONTROL.test(raw)) return OTHER;
    this.others++;
    this.known.add(raw);
    return raw;
  }
}

/** The methods the routes serve, and the usual others; any other method is `other`. */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

export function methodLabel(method: string): string {
  return METHODS.has(method) ? method : OTHER;
}

export interface TargetLabels {
  provider: string;
  model: string;
}

/** One target (`provider/model`): its labels, and the routing counts of its attempts. */
export interface TargetRow {
  name: string;
  labels: TargetLabels;
  attempts: Record<AttemptOutcome, number>;
  retries: number;
  fallbacks: number;
  continuations: number;
  /** An attempt was made or skipped: its routing series are shown from then on. */
  tried: boolean;
}

export type RequestLabel = "method" | "endpoint" | "provider" | "model" | "status" | "code" | "outcome" | "stream";
export type DurationLabel = "method" | "endpoint" | "provider" | "model" | "stream" | "outcome";

/** The requests of one label tuple, with the labels of their duration histogram made once. */
export interface RequestRow {
  labels: Record<RequestLabel, string>;
  duration: Record<DurationLabel, string>;
  count: number;
}

export type UsageLabel = "app" | "developer" | "provider" | "model";

/** Tokens and cost of one app, developer and target. */
export interface UsageRow {
  labels: Record<UsageLabel, string>;
  input: number;
  output: number;
  cost: number;
  /** A request with a price was counted: the cost series is shown. */
  priced: boolean;
}

function targetRow(name: string, provider: string, model: string): TargetRow {
  const attempts = { ok: 0, retryable: 0, timeout: 0, next: 0, final: 0, skipped: 0 };
  return { name, labels: { provider, model }, attempts, retries: 0, fallbacks: 0, continuations: 0, tried: false };
}


export class MetricSeries {
  readonly requests = new Map<string, RequestRow>();
  readonly usage = new Map<string, UsageRow>();
  /** Every configured target, by `provider/model`, and those the router made itself (a responses poll's). */
  readonly targets = new Map<string, TargetRow>();
  readonly refusals: Record<RefusalScope, number> = { app: 0, developer: 0, provider: 0, unavailable: 0 };
  inFlight = 0;
  openStreams = 0;
  readonly apps: CappedLabel;
  readonly developers: CappedLabel;
  readonly codes: CappedLabel;
  private readonly none = targetRow(NONE, NONE, NONE);
  private readonly other = targetRow(OTHER, OTHER, OTHER);
  private extraTargets = 0;

  /**
   * @param cap the most values a capped label takes besides the configured ones.
   * @param keys the configured keys' apps and developers: always their own values.
   */
  constructor(
    entries: readonly ModelEntry[],
    keys: readonly { app: string; developer: string }[],
    private readonly cap: number,
  ) {
    for (const entry of entries) this.targets.set(entry.name, targetRow(entry.name, entry.provider, entry.model));
    this.apps = new CappedLabel(cap, keys.map((key) => key.app));
    this.developers = new CappedLabel(cap, keys.map((key) => key.developer));
    this.codes = new CappedLabel(cap);
  }

  /** The row of a `provider/model`; `none` for no model. */
  target(name: string | undefined): TargetRow {
    if (name === undefined) return this.none;
    return this.targets.get(name) ?? this.addTarget(name);
  }

  /** A target that is no configured model (a responses poll's `provider/responses`), up to the cap. */
  private addTarget(name: string): TargetRow {
    if (this.extraTargets >= this.cap) return this.other;
    this.extraTargets++;
    const slash = name.indexOf("/");
    const row = slash < 0 ? targetRow(name, name, NONE) : targetRow(name, name.slice(0, slash), name.slice(slash + 1));
    this.targets.set(name, row);
    return row;
  }

  request(method: string, endpoint: string, target: TargetRow, status: number, code: string, outcome: string, stream: boolean): RequestRow {
    const key = method + SEP + endpoint + SEP + target.name + SEP + status + SEP + code + SEP + outcome + (stream ? SEP : "");
    let row = this.requests.get(key);
    if (row === undefined) {
      const { provider, model } = target.labels;
      const streamed = stream ? "true" : "false";
      row = {
        labels: { method, endpoint, provider, model, status: String(status), code, outcome, stream: streamed },
        duration: { method, endpoint, provider, model, stream: streamed, outcome },
        count: 0,
      };
      this.requests.set(key, row);
    }
    return row;
  }

  usageOf(app: string, developer: string, target: TargetRow): UsageRow {
    const key = app + SEP + developer + SEP + target.name;
    let row = this.usage.get(key);
    if (row === undefined) {
      row = { labels: { app, developer, ...target.labels }, input: 0, output: 0, cost: 0, priced: false };
      this.usage.set(key, row);
    }
    return row;
  }
}
