/**
 * The usage counters (README, "Usage"; `core/src/usage/`) without a router: which requests count
 * and how, the cap on labels from identity-provider tokens, the days of a range, and the report's
 * sums and order.
 */
import { describe, expect, it } from "vitest";
import { createLogger } from "../src/logger.ts";
import { createPricing } from "../src/operations/pricing.ts";
import type { Exchange } from "../src/server/exchange.ts";
import { upstreamError } from "../src/errors.ts";
import { createMemoryUsageStore } from "../src/usage/memory-usage-store.ts";
import { createUsageCounters, OTHER_LABEL, TOKEN_APPS } from "../src/usage/usage-counters.ts";
import { usageDays } from "../src/usage/usage-days.ts";
import { usageReport } from "../src/usage/usage-report.ts";

const today = new Date().toISOString().slice(0, 10);
const range = { firstDay: "2000-01-01", lastDay: "2000-01-01" };
const wide = { firstDay: new Date(Date.now() - 86_400_000).toISOString().slice(0, 10), lastDay: new Date(Date.now() + 86_400_000).toISOString().slice(0, 10) };

function counters() {
  const store = createMemoryUsageStore();
  const pricing = createPricing({ "p/m": { input: 1, output: 3 } });
  return { store, counters: createUsageCounters({ store, pricing, logger: createLogger({ level: "silent" }), flushMs: 60_000 }) };
}

function exchange(fields: Partial<Exchange>): Exchange {
  return { model: "p/m", principal: { app: "a", developer: "d", scheme: "api_key", admin: false }, ...fields } as Exchange;
}

describe("usage counters", () => {
  it("counts a request with a caller and a served model: errors from the status or a failed stream, tokens, cost in nano-dollars", async () => {
    const { counters: c } = counters();
    const usage = { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 };
    c.count(exchange({ usage }), 200);
    c.count(exchange({ usage }), 200);
    c.count(exchange({ failure: upstreamError("broke"), usage }), 200);
    c.count(exchange({}), 499);
    c.count(exchange({}), 502);
    c.count(exchange({ model: undefined }), 404);
    c.count(exchange({ principal: undefined }), 401);
    const rows = await c.read(wide);
    expect(rows).toEqual([{ hour: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}$/), app: "a", developer: "d", model: "p/m", requests: 5, errors: 3, inputTokens: 30, outputTokens: 9, costNanoUsd: 3 * 19_000 }]);
    await c.close();
  });

  it(`counts the first ${TOKEN_APPS} apps of identity-provider tokens by name and the rest as '${OTHER_LABEL}'; API keys' apps always by name`, async () => {
    const { counters: c } = counters();
    for (let i = 0; i < TOKEN_APPS + 5; i++) c.count(exchange({ principal: { app: `jwt-${i}`, developer: "d", scheme: "jwt", admin: false } }), 200);
    for (let i = 0; i < TOKEN_APPS + 5; i++) c.count(exchange({ principal: { app: `key-${i}`, developer: "d", scheme: "api_key", admin: false } }), 200);
    // A token app seen before the cap keeps its name.
    c.count(exchange({ principal: { app: "jwt-0", developer: "d", scheme: "jwt", admin: false } }), 200);
    const report = usageReport(await c.read(wide), { start: wide.firstDay, end: wide.lastDay, interval: "total", groupBy: ["app"] });
    const apps = new Map(report.data.map((row) => [row.app, row.requests]));
    expect(apps.size).toBe(TOKEN_APPS + 1 + TOKEN_APPS + 5);
    expect(apps.get(OTHER_LABEL)).toBe(5);
    expect(apps.get("jwt-0")).toBe(2);
    expect(apps.get(`key-${TOKEN_APPS + 4}`)).toBe(1);
    await c.close();
  });

  it("reads only the days asked for", async () => {
    const { counters: c } = counters();
    c.count(exchange({}), 200);
    expect(await c.read(range)).toEqual([]);
    expect(await c.read({ firstDay: today, lastDay: today })).toHaveLength(1);
    await c.close();
  });
});

describe("usageDays", () => {
  it("lists each day of a range, across months and leap days; none for a range out of order or over 366 days", () => {
    expect(usageDays({ firstDay: "2028-02-27", lastDay: "2028-03-01" })).toEqual(["2028-02-27", "2028-02-28", "2028-02-29", "2028-03-01"]);
    expect(usageDays({ firstDay: "2026-01-02", lastDay: "2026-01-01" })).toEqual([]);
    expect(usageDays({ firstDay: "2025-01-01", lastDay: "2026-01-01" })).toHaveLength(366);
    expect(usageDays({ firstDay: "2025-01-01", lastDay: "2026-01-02" })).toEqual([]);
    expect(usageDays({ firstDay: "2026-02-30", lastDay: "2026-03-01" })).toEqual([]);
  });
});

describe("usageReport", () => {
  const counts = { requests: 1, errors: 0, inputTokens: 1, outputTokens: 2, costNanoUsd: 1_500 };
  const rows = [
    { hour: "2026-11-25T13", app: "b", developer: "x", model: "p/m", ...counts },
    { hour: "2026-11-25T09", app: "a", developer: "x", model: "q/n", ...counts },
    { hour: "2026-11-24T23", app: "b", developer: "y", model: "p/m", ...counts },
    { hour: "2026-11-25T13", app: "b", developer: "x", model: "p/m", ...counts },
    { hour: "2026-11-26T00", app: "b", developer: "x", model: "p/m", ...counts },
  ];
  const query = { start: "2026-11-24", end: "2026-11-25" };

  it("adds up per day and group, sorted by date then the groups; a row outside the range is left out", () => {
    const report = usageReport(rows, { ...query, interval: "day", groupBy: ["app"] });
    expect(report).toMatchObject({ object: "list", start: "2026-11-24", end: "2026-11-25", interval: "day", group_by: ["app"] });
    expect(report.data).toEqual([
      { date: "2026-11-24", app: "b", requests: 1, errors: 0, input_tokens: 1, output_tokens: 2, cost_usd: 0.0000015 },
      { date: "2026-11-25", app: "a", requests: 1, errors: 0, input_tokens: 1, output_tokens: 2, cost_usd: 0.0000015 },
      { date: "2026-11-25", app: "b", requests: 2, errors: 0, input_tokens: 2, output_tokens: 4, cost_usd: 0.000003 },
    ]);
  });

  it("per hour, per provider, and in all", () => {
    expect(usageReport(rows, { ...query, interval: "hour", groupBy: ["provider"] }).data.map((r) => [r.hour, r.provider, r.requests])).toEqual([
      ["2026-11-24T23", "p", 1],
      ["2026-11-25T09", "q", 1],
      ["2026-11-25T13", "p", 2],
    ]);
    expect(usageReport(rows, { ...query, interval: "total", groupBy: [] }).data).toEqual([{ requests: 4, errors: 0, input_tokens: 4, output_tokens: 8, cost_usd: 0.000006 }]);
  });
});
