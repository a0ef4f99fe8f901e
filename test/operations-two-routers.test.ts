/**
 * Operations end to end (README, "Metrics", "Usage", "Status page", "Rate limits"): known traffic
 * through two routers that share one Redis (storage and rate limits), then each view agrees with
 * what the clients saw. `/v1/usage` and the status page's day count every router's requests,
 * tokens and cost; each router's `/metrics` counts its own, and the two add up to the same; the
 * app's budget stops it at its cap across both routers. Real servers on 127.0.0.1, the openai SDK
 * as client, Redis at REDIS_URL (skipped with a message when unreachable, failed under CI=true).
 */
import { randomBytes } from "node:crypto";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ModelmuxConfig } from "@modelmux/core";
import { deletePrefix, REDIS_URL, redisGate } from "../plugins/storage-unstorage/test/redis-gate.ts";
import { startHarness, testConfig, TEST_KEY, type Harness } from "./helpers/harness.ts";
import { parseMetrics } from "./helpers/prometheus-text.ts";

const { skip } = await redisGate("operations across two routers");
const RUN = `modelmux-test:${process.pid}-${randomBytes(3).toString("hex")}-ops`;

const ADMIN_KEY = "sk-ops-admin-0123456789";
const BUDGET_KEY = "sk-ops-budget-0123456789";
const ECHO = "echo/echo-1";
/** USD per million tokens. */
const INPUT_PRICE = 2;
const OUTPUT_PRICE = 8;

function config(): ModelmuxConfig {
  return testConfig(
    { echo: { plugin: "provider-echo", models: ["echo-1"] } },
    {
      auth: {
        api_keys: [
          { key: TEST_KEY, app: "test-app", developer: "tester" },
          { key: BUDGET_KEY, app: "capped", developer: "spender" },
          { key: ADMIN_KEY, app: "ops", developer: "root", admin: true },
        ],
      },
      pricing: { [ECHO]: { input: INPUT_PRICE, output: OUTPUT_PRICE } },
      storage: { plugin: "storage-unstorage", options: { driver: "redis", url: REDIS_URL, prefix: `${RUN}:storage:` } },
      rate_limit: { plugin: "ratelimit-redis", options: { url: REDIS_URL, prefix: `${RUN}:rl:` }, apps: { capped: { cost: 0.001, window: "1d" } } },
    },
  );
}

interface Seen {
  requests: number;
  input: number;
  output: number;
}

const costOf = (seen: Seen) => (seen.input * INPUT_PRICE + seen.output * OUTPUT_PRICE) / 1e6;

describe.skipIf(skip !== undefined)("operations across two routers sharing one Redis", () => {
  const routers: Harness[] = [];
  const seen: Seen[] = [
    { requests: 0, input: 0, output: 0 },
    { requests: 0, input: 0, output: 0 },
  ];

  beforeAll(async () => {
    routers.push(await startHarness(config(), "http"), await startHarness(config(), "http"));
  });
  afterAll(async () => {
    await Promise.all(routers.map((h) => h.close()));
    await deletePrefix(RUN);
  });

  const admin = (h: Harness, path: string) => h.request(path, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });

  it("counts the same requests, tokens and cost that the clients saw, in /v1/usage, /ui and /metrics", async () => {
    // Known traffic: 5 requests on the first router, 3 on the second, JSON and streamed.
    for (const [index, count] of [
      [0, 5],
      [1, 3],
    ] as const) {
      const client = routers[index]!.openai;
      for (let i = 0; i < count; i++) {
        const completion = await client.chat.completions.create({ model: ECHO, messages: [{ role: "user", content: `count me ${index} ${i} please` }] });
        seen[index]!.requests++;
        seen[index]!.input += completion.usage!.prompt_tokens;
        seen[index]!.output += completion.usage!.completion_tokens;
      }
      const stream = await client.chat.completions.create({ model: ECHO, messages: [{ role: "user", content: `stream ${index}` }], stream: true, stream_options: { include_usage: true } });
      for await (const chunk of stream) {
        if (!chunk.usage) continue;
        seen[index]!.input += chunk.usage.prompt_tokens;
        seen[index]!.output += chunk.usage.completion_tokens;
      }
      seen[index]!.requests++;
    }
    const total: Seen = { requests: seen[0]!.requests + seen[1]!.requests, input: seen[0]!.input + seen[1]!.input, output: seen[0]!.output + seen[1]!.output };

    // /v1/usage on either router: every router's requests, once each has written its batch (about a second).
    for (const h of routers) {
      const row = async () => {
        const reply = (await (await admin(h, "/v1/usage?interval=total&group_by=app,model")).json()) as { data: Array<Record<string, unknown>> };
        return reply.data.find((r) => r.app === "test-app" && r.model === ECHO);
      };
      await expect.poll(async () => (await row())?.requests, { timeout: 5_000, interval: 100 }).toBe(total.requests);
      expect(await row()).toMatchObject({ requests: total.requests, errors: 0, input_tokens: total.input, output_tokens: total.output });
      expect((await row())!.cost_usd as number).toBeCloseTo(costOf(total), 9);
    }

    // The status page's day: the shared counters.
    const status = (await (await admin(routers[1]!, "/ui/status.json")).json()) as { ranges: { day: { usage: { scope: string; by_app: Array<Record<string, unknown>> } } } };
    expect(status.ranges.day.usage.scope).toBe("shared");
    const app = status.ranges.day.usage.by_app.find((r) => r.name === "test-app");
    expect(app).toMatchObject({ requests: total.requests, prompt_tokens: total.input, completion_tokens: total.output });
    expect(app!.cost_usd as number).toBeCloseTo(costOf(total), 9);

    // /metrics: each router its own; together, what the clients saw.
    const sums = { requests: 0, input: 0, output: 0, cost: 0 };
    for (const [index, h] of routers.entries()) {
      const samples = parseMetrics(await (await admin(h, "/metrics")).text());
      const of = (name: string, labels: Record<string, string>) =>
        samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);
      const requests = of("modelmux_requests_total", { endpoint: "/v1/chat/completions", model: "echo-1", provider: "echo", status: "200" });
      expect(requests).toBe(seen[index]!.requests);
      expect(of("modelmux_tokens_total", { app: "test-app", kind: "input" })).toBe(seen[index]!.input);
      expect(of("modelmux_tokens_total", { app: "test-app", kind: "output" })).toBe(seen[index]!.output);
      sums.requests += requests;
      sums.input += of("modelmux_tokens_total", { app: "test-app", kind: "input" });
      sums.output += of("modelmux_tokens_total", { app: "test-app", kind: "output" });
      sums.cost += of("modelmux_cost_usd_total", { app: "test-app" });
    }
    expect(sums).toMatchObject({ requests: total.requests, input: total.input, output: total.output });
    expect(sums.cost).toBeCloseTo(costOf(total), 9);
  });

  it("an app's budget stops it at its cap across both routers", async () => {
    const clients = routers.map((h) => new OpenAI({ baseURL: h.baseURL, apiKey: BUDGET_KEY, maxRetries: 0 }));
    let spent = 0;
    let refused: { status?: number; message?: string } | undefined;
    // $0.001 at $8 per million output tokens: each request reserves 10 output tokens and costs less; bounded.
    for (let i = 0; i < 200 && refused === undefined; i++) {
      try {
        const completion = await clients[i % 2]!.chat.completions.create({ model: ECHO, max_tokens: 10, messages: [{ role: "user", content: `spend ${i} a little more budget` }] });
        spent += (completion.usage!.prompt_tokens * INPUT_PRICE + completion.usage!.completion_tokens * OUTPUT_PRICE) / 1e6;
      } catch (error) {
        refused = error as { status?: number; message?: string };
      }
    }
    expect(refused).toMatchObject({ status: 429 });
    expect(refused!.message).toMatch(/budget/);
    // Never past the cap, across both routers.
    expect(spent).toBeLessThanOrEqual(0.001 + 1e-12);
    // The other router refuses the app too.
    const other = await clients[1]!.chat.completions.create({ model: ECHO, max_tokens: 10, messages: [{ role: "user", content: "one more" }] }).catch((error: unknown) => error as { status?: number });
    expect(other).toMatchObject({ status: 429 });
  });
});
