/**
 * Usage counters and `GET /v1/usage` (README, "Usage") on one router, over both transports: what
 * is counted (per app, developer and `provider/model`: requests, errors, tokens, cost) and what is
 * not (no model, no caller); in the router's memory without a storage plugin, or with one that
 * keeps no usage; counters kept while the storage fails, and written on close. Admin keys only:
 * 401 and 403; each bad query parameter a 400 naming it. Several routers on one Redis:
 * test/usage-redis.test.ts.
 */
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger, defineStorage, providerError, type ModelmuxConfig, type UsageDelta } from "@modelmux/core";
import { createMemoryUsageStore } from "../core/src/usage/memory-usage-store.ts";
import { createFixtureStorage } from "./fixtures/plugins/storage-plugin.ts";
import { startHarness, testConfig, TEST_KEY, TRANSPORTS, type Harness } from "./helpers/harness.ts";
import { createProbe } from "./helpers/probe-provider.ts";
import { costOf, overTime, readUsage, sortedRows, utcDay, utcHour, type UsageRow } from "./helpers/usage.ts";

const ADMIN_KEY = "sk-usage-admin-0123456789";
const OTHER_KEY = "sk-usage-other-0123456789";
const ECHO = "echo/echo-1";
const PROBE = "acme/m1";
const { plugin: probePlugin, state: probe, reset: resetProbe } = createProbe();

function config(extra: Partial<ModelmuxConfig> = {}): ModelmuxConfig {
  return testConfig(
    { echo: { plugin: "provider-echo", models: ["echo-1"] }, acme: { plugin: "probe", models: ["m1"] } },
    {
      auth: {
        api_keys: [
          { key: TEST_KEY, app: "test-app", developer: "tester" },
          { key: OTHER_KEY, app: "other-app", developer: "dev2" },
          { key: ADMIN_KEY, app: "ops", developer: "root", admin: true },
        ],
      },
      pricing: { [ECHO]: { input: 2, output: 8 } },
      routing: { retry: { attempts: 0 } },
      ...extra,
    },
  );
}

/** An openai client of `h` with another key. */
function clientFor(h: Harness, key: string): OpenAI {
  const origin = h.baseURL.slice(0, -"/v1".length);
  return new OpenAI({ baseURL: h.baseURL, apiKey: key, maxRetries: 0, fetch: (input, init) => h.request(String(input).slice(origin.length), init) });
}

const chat = (model: string, content: string) => ({ model, messages: [{ role: "user" as const, content }] });
const row = (app: string, developer: string, model: string, counts: Omit<UsageRow, "app" | "developer" | "model">): UsageRow => ({ app, developer, model, ...counts });

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  resetProbe();
});

describe.each(TRANSPORTS)("usage counters over %s", (transport) => {
  const start = async (extra: Partial<ModelmuxConfig> = {}, options = {}) =>
    (harness = await startHarness(config(extra), transport, { plugins: { probe: probePlugin }, ...options }));

  it("counts requests, errors, tokens and cost per app, developer and model, in memory, before any write", async () => {
    const h = await start();
    const firstDay = utcDay();
    const firstHour = utcHour();
    const other = clientFor(h, OTHER_KEY);
    const a1 = await h.openai.chat.completions.create(chat(ECHO, "one two three"));
    const a2 = await h.openai.chat.completions.create(chat(ECHO, "four"));
    const stream = await h.openai.chat.completions.create({ ...chat(ECHO, "streamed five six"), stream: true, stream_options: { include_usage: true } });
    let streamed: { prompt_tokens: number; completion_tokens: number } | undefined;
    for await (const chunk of stream) streamed = chunk.usage ?? streamed;
    const b1 = await other.chat.completions.create(chat(ECHO, "seven"));
    await h.openai.chat.completions.create(chat(PROBE, "fine"));
    probe.error = providerError("acme", { status: 500, message: "down for the test" });
    await expect(h.openai.chat.completions.create(chat(PROBE, "fails"))).rejects.toMatchObject({ status: 502 });
    // Not counted: no served model (an unknown one, the models list), or no caller.
    await expect(h.openai.chat.completions.create(chat("nobody/nothing", "x"))).rejects.toMatchObject({ status: 404 });
    await h.openai.models.list();
    expect((await h.request("/v1/chat/completions", { method: "POST", body: "{}" })).status).toBe(401);

    const echoA = [a1.usage!, a2.usage!, streamed!];
    const sum = (usages: Array<{ prompt_tokens: number; completion_tokens: number }>) => ({
      input_tokens: usages.reduce((n, u) => n + u.prompt_tokens, 0),
      output_tokens: usages.reduce((n, u) => n + u.completion_tokens, 0),
      cost_usd: Number(usages.reduce((n, u) => n + costOf(u, 2, 8), 0).toFixed(9)),
    });
    const expected = sortedRows([
      row("other-app", "dev2", ECHO, { requests: 1, errors: 0, ...sum([b1.usage!]) }),
      row("test-app", "tester", ECHO, { requests: 3, errors: 0, ...sum(echoA) }),
      // The probe reports 1 and 1 token; it has no price.
      row("test-app", "tester", PROBE, { requests: 2, errors: 1, input_tokens: 1, output_tokens: 1, cost_usd: 0 }),
    ]);
    expect(expected.every((r) => r.model === PROBE || r.cost_usd > 0)).toBe(true);

    const byDay = await readUsage(h, ADMIN_KEY, `start=${firstDay}&group_by=app,developer,model`);
    const today = utcDay();
    expect(byDay).toMatchObject({ object: "list", start: firstDay, end: today, interval: "day", group_by: ["app", "developer", "model"] });
    expect(overTime(byDay.data, firstDay, today)).toEqual(expected);
    if (firstDay === today) {
      // Sorted by date, then app, developer and model.
      expect(byDay.data.map((r) => [r.date, r.app, r.developer, r.model])).toEqual(expected.map((r) => [today, r.app, r.developer, r.model]));
    }
    const byHour = await readUsage(h, ADMIN_KEY, `start=${firstDay}&interval=hour&group_by=app,developer,model`);
    expect(overTime(byHour.data, firstHour, utcHour())).toEqual(expected);
    expect(byHour.data.every((r) => /^\d{4}-\d{2}-\d{2}T\d{2}$/.test(r.hour!) && r.date === undefined)).toBe(true);

    // Totals, per provider, per app: the same counts added up differently.
    const total = await readUsage(h, ADMIN_KEY, `start=${firstDay}&interval=total`);
    const added = (field: "input_tokens" | "output_tokens" | "cost_usd") => Number(expected.reduce((n, r) => n + r[field], 0).toFixed(9));
    expect(total.data).toEqual([{ requests: 6, errors: 1, input_tokens: added("input_tokens"), output_tokens: added("output_tokens"), cost_usd: added("cost_usd") }]);
    const providers = await readUsage(h, ADMIN_KEY, `start=${firstDay}&interval=total&group_by=provider`);
    expect(providers.data.map((r) => [r.provider, r.requests, r.errors])).toEqual([["acme", 2, 1], ["echo", 4, 0]]);
    const apps = await readUsage(h, ADMIN_KEY, `start=${firstDay}&interval=total&group_by=developer,app`);
    expect(apps.data.map((r) => Object.keys(r).slice(0, 2))).toEqual([["developer", "app"], ["developer", "app"]]);
    expect(apps.data.map((r) => [r.developer, r.requests])).toEqual([["dev2", 1], ["tester", 5]]);
    // The usage calls themselves have no model: still six.
    expect((await readUsage(h, ADMIN_KEY, `start=${firstDay}&interval=total`)).data[0]!.requests).toBe(6);
  });

  it("answers today by default, and nothing for days without requests", async () => {
    const h = await start();
    const day = utcDay();
    const before = await readUsage(h, ADMIN_KEY);
    expect(before).toMatchObject({ interval: "day", group_by: [], data: [] });
    expect(before.start).toBe(before.end);
    expect([day, utcDay()]).toContain(before.end);
    await h.openai.chat.completions.create(chat(ECHO, "hello"));
    const after = await readUsage(h, ADMIN_KEY, `start=${before.start}`);
    expect(after.data).toHaveLength(1);
    expect(after.data[0]).toMatchObject({ requests: 1, errors: 0 });
    expect(Object.keys(after.data[0]!)).toEqual(["date", "requests", "errors", "input_tokens", "output_tokens", "cost_usd"]);
    expect((await readUsage(h, ADMIN_KEY, "start=2020-01-01&end=2020-12-31&interval=total")).data).toEqual([]);
  });

  it("is for admin keys only: 401 without a valid key, 403 permission_error to any other key; HEAD too", async () => {
    const h = await start();
    for (const headers of [{}, { authorization: "Bearer sk-wrong-0123456789" }] as Array<Record<string, string>>) {
      const res = await h.request("/v1/usage", { headers });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_api_key");
    }
    const refused = await h.request("/v1/usage", { headers: { authorization: `Bearer ${TEST_KEY}` } });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: { type: "permission_error", code: "admin_required" } });
    const head = await h.request("/v1/usage", { method: "HEAD", headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });

  it("refuses each bad query parameter with a 400 naming it", async () => {
    const h = await start();
    const cases: Array<[query: string, param: string, code?: string]> = [
      ["start=2026-13-01", "start"],
      ["start=2026-02-30", "start"],
      ["start=26-01-01", "start"],
      ["end=today", "end"],
      ["start=2026-03-02&end=2026-03-01", "start"],
      ["start=2025-01-01&end=2026-01-02", "end"], // 367 days
      ["group_by=app,colour", "group_by"],
      ["interval=week", "interval"],
      ["interval=day&interval=hour", "interval"],
      ["colour=blue", "colour", "unknown_field"],
    ];
    for (const [query, param, code = "invalid_value"] of cases) {
      const res = await h.request(`/v1/usage?${query}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
      expect(res.status, query).toBe(400);
      expect(await res.json(), query).toMatchObject({ error: { type: "invalid_request_error", code, param } });
    }
    // 366 days is the most, a duplicate group is one group.
    const year = await readUsage(h, ADMIN_KEY, "start=2025-01-01&end=2026-01-01&group_by=app,app,model");
    expect(year).toMatchObject({ start: "2025-01-01", end: "2026-01-01", group_by: ["app", "model"] });
  });

  it("with a storage plugin that keeps no usage, counts in memory and says so once at start", async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: "info", write: (text) => lines.push(text) });
    const h = await start({ storage: { plugin: "bare" } }, { plugins: { probe: probePlugin, bare: defineStorage({ contract: 2, name: "bare", optionsSchema: { type: "object" }, setup: () => createFixtureStorage() }) }, logger });
    logger.flush();
    expect(lines.join("").match(/storage plugin 'bare' has no usage counters/g)).toHaveLength(1);
    await h.openai.chat.completions.create(chat(ECHO, "counted"));
    expect((await readUsage(h, ADMIN_KEY, `start=${utcDay(Date.now() - 3_600_000)}&interval=total`)).data).toMatchObject([{ requests: 1 }]);
  });

  it("keeps the counters while the storage fails, counts them meanwhile, writes them once it is back, and on close", async () => {
    const kept = createMemoryUsageStore();
    const writes: UsageDelta[][] = [];
    let down = true;
    const flaky = defineStorage({
      contract: 2,
      name: "flaky",
      optionsSchema: { type: "object" },
      setup: () => ({
        ...createFixtureStorage(),
        async addUsage(deltas: readonly UsageDelta[]) {
          writes.push([...deltas]);
          if (down) throw new Error("backend down for the test");
          await kept.addUsage(deltas);
        },
        readUsage: (range: { firstDay: string; lastDay: string }) => kept.readUsage(range),
      }),
    });
    const lines: string[] = [];
    const logger = createLogger({ level: "warn", write: (text) => lines.push(text) });
    const h = await start({ storage: { plugin: "flaky" } }, { plugins: { probe: probePlugin, flaky }, logger });
    const range = { firstDay: utcDay(Date.now() - 3_600_000), lastDay: utcDay(Date.now() + 3_600_000) };
    const query = `start=${range.firstDay}&end=${range.lastDay}&interval=total`;
    await h.openai.chat.completions.create(chat(ECHO, "while down 1"));
    await h.openai.chat.completions.create(chat(ECHO, "while down 2"));
    expect((await readUsage(h, ADMIN_KEY, query)).data).toMatchObject([{ requests: 2 }]);
    expect(writes.length).toBeGreaterThan(0);
    expect(await kept.readUsage(range)).toEqual([]);
    logger.flush();
    expect(lines.join("")).toMatch(/usage: could not write 1 counter row\(s\) to the storage; kept and tried again: backend down for the test/);

    down = false;
    // The read writes first: the two are in the storage once, and counted once.
    expect((await readUsage(h, ADMIN_KEY, query)).data).toMatchObject([{ requests: 2 }]);
    expect((await kept.readUsage(range)).reduce((n, r) => n + r.requests, 0)).toBe(2);

    await h.openai.chat.completions.create(chat(ECHO, "just before the stop"));
    await h.close();
    harness = undefined;
    expect((await kept.readUsage(range)).reduce((n, r) => n + r.requests, 0)).toBe(3);
  });
});
