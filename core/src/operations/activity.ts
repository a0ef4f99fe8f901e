/**
 * This router's recent activity, in memory, for the status page (README, "Status page"): one
 * bucket per minute of the last 24 hours in a ring of 1440, each with its requests, errors and a
 * latency histogram (`latency-histogram.ts`), and its requests, tokens and cost broken down by
 * app × model × error code, and the upstream attempts of each target (`provider/model`) with their
 * failures. Nothing is shared across routers and nothing survives a restart.
 *
 * Memory is bounded whatever the traffic: apps, models and error codes are labels whose distinct
 * values are capped (past the cap a new value is counted as `other`: identity-provider tokens can
 * carry any app claim), and so are the breakdown's cells per minute (past it, `other` on all
 * three). The minute's totals and latencies stay exact. Reads are `activity-summary.ts`.
 */
import type { AttemptRecord } from "../routing/types.ts";
import { LATENCY_BINS, latencyBin } from "./latency-histogram.ts";

/** A day of minutes. */
export const WINDOW_MINUTES = 1440;
const MINUTE_MS = 60_000;

/** The label of a value past its cap, and of a request without one (no app: not authenticated; no model: not routed). */
export const OTHER = "other";
export const NONE = "-";

/** One request, once its reply has ended. */
export interface ActivitySample {
  /** The caller's app; `-` when none was authenticated. */
  app: string;
  /** The served `provider/model` (from the config, never the client's raw name); `-` when none. */
  model: string;
  /** The error code of an error reply or a failed stream; `""` for a success. */
  code: string;
  /** From the request's arrival to its reply's end. */
  latencyMs: number;
  promptTokens: number;
  completionTokens: number;
  /** USD; undefined when unknown (no price, or no usage). */
  cost: number | undefined;
  /** The upstream attempts of a routed request, fallbacks' included (`x.attempts`). */
  attempts?: readonly AttemptRecord[] | undefined;
}

/** A target's upstream attempts in one minute, and those that failed (retryable or timed out: what its circuit counts). */
export interface TargetCounts {
  attempts: number;
  failures: number;
}

/** The requests of one app × model × code in one minute. */
export interface ActivityCell {
  readonly app: string;
  readonly model: string;
  readonly code: string;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  cost: number;
}

/** One minute of activity. */
export interface ActivityBucket {
  /** Minutes since the Unix epoch. */
  minute: number;
  requests: number;
  errors: number;
  latency: Uint32Array;
  cells: Map<string, ActivityCell>;
  /** By target `provider/model`. */
  targets: Map<string, TargetCounts>;
}

export interface ActivityWindowOptions {
  /** The wall clock, ms since the epoch. Default: `Date.now`. */
  now?: () => number;
  /** Distinct apps kept before others count as `other`. Default 100. */
  maxApps?: number;
  /** Distinct models kept (they come from the config). Default 500. */
  maxModels?: number;
  /** Distinct error codes kept. Default 50. */
  maxCodes?: number;
  /** Cells of the breakdown per minute. Default 200. */
  maxCellsPerMinute?: number;
}

/** Caps the distinct values of one label: a value seen before, or a new one while there is room, else `other`. */
class CappedLabel {
  private readonly seen = new Set<string>();
  constructor(private readonly cap: number) {}

  of(value: string): string {
    if (this.seen.has(value)) return value;
    if (this.seen.size >= this.cap) return OTHER;
    this.seen.add(value);
    return value;
  }
}

/**
 * The activity window of one router.
 * @example
 * const activity = new ActivityWindow();
 * activity.record({ app: "web", model: "openai/gpt-4o", code: "", latencyMs: 812, promptTokens: 20, completionTokens: 5, cost: 0.0001 });
 * activity.buckets(60); // the last hour's minutes that saw traffic, oldest first
 */
export class ActivityWindow {
  readonly now: () => number;
  /** When the window started counting, ms since the epoch. */
  readonly since: number;
  private readonly ring: Array<ActivityBucket | undefined> = new Array(WINDOW_MINUTES);
  private readonly apps: CappedLabel;
  private readonly models: CappedLabel;
  private readonly codes: CappedLabel;
  private readonly maxCells: number;

  constructor(options: ActivityWindowOptions = {}) {
    const { now = Date.now, maxApps = 100, maxModels = 500, maxCodes = 50, maxCellsPerMinute = 200 } = options;
    this.now = now;
    this.since = now();
    this.apps = new CappedLabel(maxApps);
    this.models = new CappedLabel(maxModels);
    this.codes = new CappedLabel(maxCodes);
    this.maxCells = maxCellsPerMinute;
  }

  /** Counts one request in the current minute. */
  record(sample: ActivitySample): void {
    const bucket = this.bucketAt(Math.floor(this.now() / MINUTE_MS));
    bucket.requests++;
    if (sample.code !== "") bucket.errors++;
    bucket.latency[latencyBin(sample.latencyMs)]!++;
    let app = this.apps.of(sample.app);
    let model = this.models.of(sample.model);
    let code = sample.code === "" ? "" : this.codes.of(sample.code);
    let key = `${app}\n${model}\n${code}`;
    let cell = bucket.cells.get(key);
    if (cell === undefined) {
      if (bucket.cells.size >= this.maxCells) {
        app = model = OTHER;
        code = code === "" ? "" : OTHER;
        key = `${app}\n${model}\n${code}`;
        cell = bucket.cells.get(key);
      }
      if (cell === undefined) bucket.cells.set(key, (cell = { app, model, code, requests: 0, promptTokens: 0, completionTokens: 0, cost: 0 }));
    }
    cell.requests++;
    cell.promptTokens += sample.promptTokens;
    cell.completionTokens += sample.completionTokens;
    if (sample.cost !== undefined) cell.cost += sample.cost;
    if (sample.attempts !== undefined) this.countAttempts(bucket, sample.attempts);
  }

  private countAttempts(bucket: ActivityBucket, attempts: readonly AttemptRecord[]): void {
    for (const attempt of attempts) {
      if (attempt.outcome === "skipped") continue;
      const target = this.models.of(attempt.target);
      let counts = bucket.targets.get(target);
      if (counts === undefined) bucket.targets.set(target, (counts = { attempts: 0, failures: 0 }));
      counts.attempts++;
      if (attempt.outcome === "retryable" || attempt.outcome === "timeout") counts.failures++;
    }
  }

  /** The minute now, since the epoch. */
  currentMinute(): number {
    return Math.floor(this.now() / MINUTE_MS);
  }

  /**
   * The buckets of the last `minutes` minutes (this one included) that saw traffic, oldest first.
   * Read them, never change them.
   */
  buckets(minutes: number, last = this.currentMinute()): ActivityBucket[] {
    const span = Math.min(Math.max(1, Math.floor(minutes)), WINDOW_MINUTES);
    const found: ActivityBucket[] = [];
    for (let minute = last - span + 1; minute <= last; minute++) {
      const bucket = this.ring[minute % WINDOW_MINUTES];
      if (bucket !== undefined && bucket.minute === minute) found.push(bucket);
    }
    return found;
  }

  /** The bucket of `minute`, the ring's slot cleared for it when it held a day-old minute. */
  private bucketAt(minute: number): ActivityBucket {
    const slot = minute % WINDOW_MINUTES;
    const bucket = this.ring[slot];
    if (bucket === undefined) {
      const made: ActivityBucket = { minute, requests: 0, errors: 0, latency: new Uint32Array(LATENCY_BINS), cells: new Map(), targets: new Map() };
      this.ring[slot] = made;
      return made;
    }
    if (bucket.minute !== minute) {
      bucket.minute = minute;
      bucket.requests = 0;
      bucket.errors = 0;
      bucket.latency.fill(0);
      bucket.cells.clear();
      bucket.targets.clear();
    }
    return bucket;
  }
}
