/**
 * The status page's usage source (core/src/status-page/endpoint.ts, README "Status page"): by default
 * the last hour's usage by app and model is this router's activity window, and the last day's the
 * usage counters' (every router's when the storage keeps them); a `usageSource` given to
 * `createStatusPageHandlers` (the shared usage counters, once they serve it) replaces it for both
 * ranges, and the page is told the figures are every router's (`scope: "shared"`).
 */
import { describe, expect, it } from "vitest";
import type { AppContext } from "../src/app-context.ts";
import { ActivityWindow } from "../src/operations/activity.ts";
import type { ActivityRange, UsageTotals } from "../src/operations/activity-summary.ts";
import { CircuitBreakers } from "../src/routing/circuit-breaker.ts";
import type { Exchange } from "../src/server/exchange.ts";
import type { JsonReply } from "../src/server/reply.ts";
import { createStatusPageHandlers } from "../src/status-page/endpoint.ts";
import { hourOf } from "../src/usage/usage-days.ts";
import type { StatusReply } from "../src/status-page/status.ts";

function context(): AppContext {
  const activity = new ActivityWindow();
  activity.record({ app: "web", model: "echo/echo-1", code: "", latencyMs: 3, promptTokens: 4, completionTokens: 2, cost: 0.25 });
  // The usage counters: one row of this hour, from every router.
  const usage = { read: async () => [{ hour: hourOf(Date.now()), app: "everyone", developer: "d", model: "echo/echo-1", requests: 7, errors: 1, inputTokens: 70, outputTokens: 14, costNanoUsd: 2_500_000_000 }] };
  const storage = { addUsage: async () => {}, readUsage: async () => [] };
  return { models: { entries: [] }, breakers: new CircuitBreakers(), activity, usage, storage, rateLimits: undefined, authenticate: () => ({ app: "x", developer: "y", scheme: "api_key", admin: false }) } as unknown as AppContext;
}

/** An admin's request, its principal already known. */
const adminRequest = { principal: { app: "ops", developer: "root", scheme: "api_key", admin: true }, header: () => undefined } as unknown as Exchange;

async function statusOf(handlers: ReturnType<typeof createStatusPageHandlers>): Promise<StatusReply> {
  return JSON.parse(((await handlers.status(adminRequest)) as JsonReply).body) as StatusReply;
}

describe("the status page's usage source", () => {
  it("is this router's activity window for the hour, and the shared usage counters for the day, by default", async () => {
    const status = await statusOf(createStatusPageHandlers(context()));
    expect(status.ranges.hour.usage).toEqual({
      scope: "router",
      by_app: [{ name: "web", requests: 1, errors: 0, prompt_tokens: 4, completion_tokens: 2, cost_usd: 0.25 }],
      by_model: [{ name: "echo/echo-1", requests: 1, errors: 0, prompt_tokens: 4, completion_tokens: 2, cost_usd: 0.25 }],
    });
    expect(status.ranges.day.usage).toEqual({
      scope: "shared",
      by_app: [{ name: "everyone", requests: 7, errors: 1, prompt_tokens: 70, completion_tokens: 14, cost_usd: 2.5 }],
      by_model: [{ name: "echo/echo-1", requests: 7, errors: 1, prompt_tokens: 70, completion_tokens: 14, cost_usd: 2.5 }],
    });
  });

  it("is replaced by the one given, asked once per range, while the rest stays this router's", async () => {
    const asked: ActivityRange[] = [];
    const shared = async (range: ActivityRange): Promise<UsageTotals> => {
      asked.push(range);
      const row = { name: "everyone", requests: range === "hour" ? 10 : 240, errors: 0, prompt_tokens: 1, completion_tokens: 1, cost_usd: 1 };
      return { scope: "shared", by_app: [row], by_model: [] };
    };
    const status = await statusOf(createStatusPageHandlers(context(), { usageSource: shared }));
    expect(asked.sort()).toEqual(["day", "hour"]);
    expect(status.ranges.hour.usage).toMatchObject({ scope: "shared", by_app: [{ name: "everyone", requests: 10 }] });
    expect(status.ranges.day.usage.by_app[0]!.requests).toBe(240);
    expect(status.ranges.hour.requests).toBe(1);
  });

  it("is never reached by a key that is not an admin key", async () => {
    const handlers = createStatusPageHandlers(context(), { usageSource: () => expect.fail("asked") });
    expect(() => handlers.status({ header: () => "Bearer k" } as unknown as Exchange)).toThrow(expect.objectContaining({ status: 403 }));
  });
});
