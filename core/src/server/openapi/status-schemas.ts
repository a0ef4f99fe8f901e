/**
 * The JSON Schemas of `GET /ui/status.json` (README, "Status page"), for the OpenAPI document:
 * closed like the other replies the router makes (`reply-schemas.ts`), except the limits' numbers,
 * which are the configured rule's and the limiter's own (`requests`, `tokens`, a budget's `cost`).
 */
import type { JsonSchema } from "../../plugin.ts";
import type { CircuitState } from "../../routing/circuit-breaker.ts";
import type { TargetHealth } from "../../status-page/status.ts";
import { schemaRef } from "./reply-schemas.ts";

// Keyed by the TypeScript unions, so a value added to one fails the type check until it is here too.
const CIRCUITS: Record<CircuitState, true> = { closed: true, open: true, "half-open": true };
const HEALTH: Record<TargetHealth, true> = { ok: true, idle: true, degraded: true, probing: true, down: true };

const string: JsonSchema = { type: "string" };
const count: JsonSchema = { type: "integer", minimum: 0 };
const time: JsonSchema = { type: "string", format: "date-time" };
const latency: JsonSchema = { type: ["number", "null"], minimum: 0, description: "Milliseconds; null when nothing was counted." };
const numbers = (description: string): JsonSchema => ({ type: "object", description, additionalProperties: { type: "number" } });

function closed(required: readonly string[], properties: Record<string, JsonSchema>, description?: string): JsonSchema {
  return { type: "object", ...(description && { description }), required: [...required], additionalProperties: false, properties };
}

const percentiles = { p50: latency, p90: latency, p99: latency };

const usageRow = closed(["name", "requests", "errors", "prompt_tokens", "completion_tokens", "cost_usd"], {
  name: { type: "string", description: "The app or the `provider/model`; `-` for none, `other` past the label caps." },
  requests: count,
  errors: count,
  prompt_tokens: count,
  completion_tokens: count,
  cost_usd: { type: "number", minimum: 0 },
});

const range = closed(
  ["minutes", "step_s", "requests", "errors", "rate_per_min", "latency_ms", "errors_by_code", "series", "usage"],
  {
    minutes: count,
    step_s: count,
    requests: count,
    errors: count,
    rate_per_min: { type: "number", minimum: 0 },
    latency_ms: closed(["p50", "p90", "p99"], percentiles),
    errors_by_code: { type: "object", additionalProperties: count },
    series: {
      type: "array",
      description: "Every step of the range, oldest first.",
      items: closed(["t", "requests", "errors", "p50", "p90", "p99"], { t: { ...count, description: "The step's start, Unix seconds." }, requests: count, errors: count, ...percentiles }),
    },
    usage: closed(["scope", "by_app", "by_model"], {
      scope: { type: "string", enum: ["router", "shared"], description: "`router`: this router's own requests; `shared`: every router's usage counters." },
      by_app: { type: "array", items: schemaRef("StatusUsageRow") },
      by_model: { type: "array", items: schemaRef("StatusUsageRow") },
    }),
  },
  "This router's last hour or day.",
);

const target = closed(["model", "provider", "circuit", "failures", "health", "recent"], {
  model: string,
  provider: string,
  circuit: { type: "string", enum: Object.keys(CIRCUITS) },
  failures: count,
  probe_in_ms: count,
  health: { type: "string", enum: Object.keys(HEALTH) },
  recent: closed(["minutes", "attempts", "failures"], { minutes: count, attempts: count, failures: count }, "Its upstream attempts of the last minutes, and those that failed (retryable, timed out)."),
});

const rateLimits = closed(["rules", "latest"], {
  rules: {
    type: "array",
    items: closed(["scope", "name", "limit"], {
      scope: { type: "string", enum: ["app", "developer", "provider"] },
      name: { type: "string", description: "`*`: every app's or developer's own limit." },
      limit: { type: ["object", "null"], description: "`window_ms` and each limited amount; null: not limited.", additionalProperties: { type: "number" } },
    }),
  },
  latest: {
    type: "array",
    items: closed(["key", "scope", "name", "limit", "remaining", "reset_ms", "retry_after_ms", "seen_at"], {
      key: string,
      scope: string,
      name: string,
      limit: numbers("`window_ms` and each limited amount."),
      remaining: numbers("What was left of each amount."),
      reset_ms: numbers("Ms until each amount's oldest use leaves the window."),
      retry_after_ms: count,
      seen_at: time,
    }),
  },
});

/** The status page's schemas, by their name under `components.schemas`. */
export const STATUS_SCHEMAS: Readonly<Record<string, JsonSchema>> = {
  StatusUsageRow: usageRow,
  StatusRange: range,
  Status: closed(
    ["generated_at", "since", "ranges", "targets", "rate_limits"],
    {
      generated_at: time,
      since: { ...time, description: "When this router's window began counting." },
      ranges: closed(["hour", "day"], { hour: schemaRef("StatusRange"), day: schemaRef("StatusRange") }),
      targets: { type: "array", items: target },
      rate_limits: { anyOf: [{ type: "null" }, rateLimits] },
    },
    "The figures of the status page.",
  ),
};
