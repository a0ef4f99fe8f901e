/**
 * The body of `GET /ui/status.json` (README, "Status page"): the last hour's and day's activity of
 * this router, the usage by app and model (from the usage source: this router's window unless
 * another is given), each configured target's circuit and recent requests, and the rate limits:
 * the configured rules and the latest counters seen per rule key. Rules and states are copied field
 * by field, so a limit the config adds later (a budget's `cost`) shows without a change here.
 */
import type { AppContext } from "../app-context.ts";
import { type ActivityRange, type RangeSummary, type UsageSource, type UsageTotals, recentTargets, summarize } from "../operations/activity-summary.ts";
import type { RateLimits } from "../rate-limit/acquire.ts";
import type { LimitSpec } from "../rate-limit/policy.ts";
import type { CircuitState } from "../routing/circuit-breaker.ts";

/** How far back a target's attempts and failures are counted for its health. */
export const TARGET_MINUTES = 5;

export type TargetHealth = "ok" | "idle" | "degraded" | "probing" | "down";

export interface TargetStatus {
  model: string;
  provider: string;
  circuit: CircuitState;
  /** Consecutive retryable failures counted while closed. */
  failures: number;
  /** Ms until an open circuit admits its probe. */
  probe_in_ms?: number;
  health: TargetHealth;
  /** Its upstream attempts of the last minutes (fallbacks' included), and those that failed (retryable or timed out). */
  recent: { minutes: number; attempts: number; failures: number };
}

/** A limit's numbers: `window_ms`, `requests`, and `tokens`, `cost` or any other the rule has. */
export type LimitNumbers = Record<string, number>;

export interface RuleStatus {
  scope: "app" | "developer" | "provider";
  /** The app, developer or provider; `*` for the default of every app or developer. */
  name: string;
  /** Null: this app or developer is not limited. */
  limit: LimitNumbers | null;
}

export interface SeenRuleStatus {
  key: string;
  scope: string;
  name: string;
  limit: LimitNumbers;
  /** What was left: `requests`, `tokens`, `cost`, … as the limiter's state carries them. */
  remaining: Record<string, number>;
  /** Ms until each counter's oldest entry leaves the window, as of `seen_at`. */
  reset_ms: Record<string, number>;
  retry_after_ms: number;
  seen_at: string;
}

export interface RangeStatus extends RangeSummary {
  usage: UsageTotals;
}

export interface StatusReply {
  generated_at: string;
  /** Since when this router's window counts (its start). */
  since: string;
  ranges: Record<ActivityRange, RangeStatus>;
  targets: TargetStatus[];
  /** Null when no rate limit is configured. */
  rate_limits: { rules: RuleStatus[]; latest: SeenRuleStatus[] } | null;
}

export type StatusContext = Pick<AppContext, "models" | "breakers" | "activity" | "rateLimits">;

/** `windowMs` → `window_ms`; every other number as it is named. */
function limitNumbers(spec: object): LimitNumbers {
  const numbers: LimitNumbers = {};
  for (const [name, value] of Object.entries(spec)) {
    if (typeof value !== "number") continue;
    numbers[name === "windowMs" ? "window_ms" : name] = value;
  }
  return numbers;
}

const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);

function seenRule(seen: ReturnType<RateLimits["latest"]["list"]>[number]): SeenRuleStatus {
  const { key, scope, name, ...limit } = seen.rule;
  const remaining: Record<string, number> = {};
  const reset: Record<string, number> = {};
  for (const [field, value] of Object.entries(seen.state)) {
    if (typeof value !== "number") continue;
    const left = /^remaining([A-Z]\w*)$/.exec(field);
    const resets = /^reset([A-Z]\w*)Ms$/.exec(field);
    if (left) remaining[lowerFirst(left[1]!)] = value;
    else if (resets) reset[lowerFirst(resets[1]!)] = value;
  }
  return { key, scope, name, limit: limitNumbers(limit), remaining, reset_ms: reset, retry_after_ms: seen.state.retryAfterMs, seen_at: new Date(seen.at).toISOString() };
}

function rules(limits: RateLimits): RuleStatus[] {
  const { policy } = limits;
  const list: RuleStatus[] = [];
  const add = (scope: RuleStatus["scope"], name: string, spec: LimitSpec | null) => list.push({ scope, name, limit: spec && limitNumbers(spec) });
  if (policy.app) add("app", "*", policy.app);
  for (const [name, spec] of policy.apps) add("app", name, spec);
  if (policy.developer) add("developer", "*", policy.developer);
  for (const [name, spec] of policy.developers) add("developer", name, spec);
  for (const [name, spec] of policy.providers) add("provider", name, spec);
  return list;
}

function targets(ctx: StatusContext): TargetStatus[] {
  const recent = recentTargets(ctx.activity, TARGET_MINUTES);
  return ctx.models.entries.map((entry) => {
    const circuit = ctx.breakers.inspect(entry.name);
    const counts = recent.get(entry.name) ?? { attempts: 0, failures: 0 };
    const health: TargetHealth =
      circuit.state === "open" ? "down" : circuit.state === "half-open" ? "probing" : counts.failures > 0 ? "degraded" : counts.attempts > 0 ? "ok" : "idle";
    return {
      model: entry.name,
      provider: entry.provider,
      circuit: circuit.state,
      failures: circuit.failures,
      ...(circuit.probeInMs !== undefined && { probe_in_ms: Math.ceil(circuit.probeInMs) }),
      health,
      recent: { minutes: TARGET_MINUTES, ...counts },
    };
  });
}

/**
 * The status now.
 * @param usage where the usage by app and model comes from (README, "Status page": this router's, or every router's).
 */
export async function buildStatus(ctx: StatusContext, usage: UsageSource): Promise<StatusReply> {
  const [hourUsage, dayUsage] = await Promise.all([usage("hour"), usage("day")]);
  return {
    generated_at: new Date(ctx.activity.now()).toISOString(),
    since: new Date(ctx.activity.since).toISOString(),
    ranges: {
      hour: { ...summarize(ctx.activity, "hour"), usage: hourUsage },
      day: { ...summarize(ctx.activity, "day"), usage: dayUsage },
    },
    targets: targets(ctx),
    rate_limits: ctx.rateLimits ? { rules: rules(ctx.rateLimits), latest: ctx.rateLimits.latest.list().map(seenRule) } : null,
  };
}
