/**
 * End-to-end: two routers sharing one Redis through `ratelimit-redis` enforce one limit between
 * them, exactly, under concurrent load; windows roll over and streamed token usage is counted
 * across both; with Redis down, `on_error` decides. Real servers on 127.0.0.1, the openai SDK as
 * client. Redis is at REDIS_URL (skipped with a message when unreachable, failed under CI=true).
 */
import { randomBytes } from "node:crypto";
import OpenAI from "openai";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { ModelmuxConfig } from "@modelmux/core";
import { deletePrefix, REDIS_URL, redisGate } from "../plugins/storage-unstorage/test/redis-gate.ts";
import { postJson, startHarness, testConfig, type Harness } from "./helpers/harness.ts";
import { createProbe } from "./helpers/probe-provider.ts";

const { skip } = await redisGate("rate limits on Redis (end to end)");
const RUN = `modelmux-test:${process.pid}-${randomBytes(3).toString("hex")}-rl`;
let configs = 0;
afterAll(async () => {
  if (skip === undefined) await deletePrefix(RUN);
});

const { plugin: probePlugin, state: probe } = createProbe();
const CHAT = "/v1/chat/completions";
const hello = { model: "acme/m1", messages: [{ role: "user" as const, content: "hi" }] };
const echoHello = { model: "echo/echo-1", messages: [{ role: "user" as const, content: "hello there" }] };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function redisConfig(limits: Omit<NonNullable<ModelmuxConfig["rate_limit"]>, "plugin" | "options">, options: Record<string, unknown> = {}): ModelmuxConfig {
  return testConfig(
    { acme: { plugin: "probe", models: ["m1"] }, echo: { plugin: "provider-echo", models: ["echo-1"] } },
    { rate_limit: { plugin: "ratelimit-redis", options: { url: REDIS_URL, prefix: `${RUN}:${++configs}:`, ...options }, ...limits } },
  );
}

const routers: Harness[] = [];
afterEach(async () => {
  await Promise.all(routers.splice(0).map((r) => r.close()));
  probe.calls.length = 0;
});
/** `count` routers on real ports, all on the same config (so the same Redis prefix). */
async function startRouters(config: ModelmuxConfig, count: number): Promise<Harness[]> {
  const started = await Promise.all(Array.from({ length: count }, () => startHarness(config, "http", { plugins: { probe: probePlugin } })));
  routers.push(...started);
  return started;
}

describe.skipIf(skip !== undefined)("rate limits shared through Redis", () => {
  it("two routers admit exactly 50 of 200 concurrent requests against one developer limit of 50", async () => {
    const [a, b] = await startRouters(redisConfig({ developer: { requests: 50, window: "60s" } }), 2);
    const started = Date.now();
    const outcomes = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        (i % 2 ? a! : b!).openai.chat.completions
          .create(hello)
          .withResponse()
          .then(({ response }) => ({ status: 200, remaining: response.headers.get("x-ratelimit-remaining-requests") }))
          .catch((error: unknown) => ({ status: (error as InstanceType<typeof OpenAI.APIError>).status, retryAfter: (error as InstanceType<typeof OpenAI.APIError>).headers?.get("retry-after") })),
      ),
    );
    const passed = outcomes.filter((o) => o.status === 200);
    const refused = outcomes.filter((o) => o.status === 429);
    expect(passed).toHaveLength(50);
    expect(refused).toHaveLength(150);
    expect(probe.calls).toHaveLength(50);
    // Every admitted request saw its own place in the shared count: 49 down to 0, each once.
    expect(passed.map((o) => Number((o as { remaining: string }).remaining)).sort((x, y) => x - y)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    // The window's first request was admitted after `started`: whatever the load, the wait left is
    // the window less the time the 200 requests took, rounded up.
    const minimum = 60 - Math.ceil((Date.now() - started) / 1000);
    for (const o of refused) expect(Number((o as { retryAfter: string }).retryAfter)).toBeGreaterThanOrEqual(minimum);
  });

  it("rolls the shared window over", async () => {
    const [a, b] = await startRouters(redisConfig({ developer: { requests: 2, window: "1s" } }), 2);
    expect((await a!.request(CHAT, postJson(hello))).status).toBe(200);
    expect((await b!.request(CHAT, postJson(hello))).status).toBe(200);
    const refused = await a!.request(CHAT, postJson(hello));
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    await sleep(Number(refused.headers.get("retry-after-ms")) + 30);
    expect((await b!.request(CHAT, postJson(hello))).status).toBe(200);
  });

  it("counts a streamed reply's tokens on one router against the limit the other applies", async () => {
    const [a, b] = await startRouters(redisConfig({ developer: { requests: 100, tokens: 15, window: "60s" } }), 2);
    const stream = await a!.openai.chat.completions.create({ ...echoHello, stream: true });
    for await (const _chunk of stream);
    // The stream used 6 tokens ("hello there": 3 in, 3 out); a reply's own usage counts after it.
    const { response } = await b!.openai.chat.completions.create(echoHello).withResponse();
    expect(response.headers.get("x-ratelimit-remaining-tokens")).toBe("9");
    expect(response.headers.get("x-ratelimit-limit-tokens")).toBe("15");
    const third = await a!.request(CHAT, postJson(echoHello));
    expect(third.headers.get("x-ratelimit-remaining-tokens")).toBe("3");
    await third.json();
    const refused = await b!.request(CHAT, postJson(echoHello));
    expect(refused.status).toBe(429);
    expect(refused.headers.get("x-ratelimit-remaining-tokens")).toBe("0");
  });
});

describe("rate limits with Redis unreachable", () => {
  const down = { url: "redis://127.0.0.1:1", connect_timeout_ms: 200 };

  it("on_error: open serves requests, uncounted and without x-ratelimit-* headers", async () => {
    const [r] = await startRouters(redisConfig({ developer: { requests: 1, window: "60s" } }, down), 1);
    for (let i = 0; i < 3; i++) {
      const res = await r!.request(CHAT, postJson(hello));
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit-requests")).toBeNull();
    }
  });

  it("on_error: closed refuses with a 429 that says why, before the provider", async () => {
    const [r] = await startRouters(redisConfig({ developer: { requests: 1, window: "60s" } }, { ...down, on_error: "closed" }), 1);
    const res = await r!.request(CHAT, postJson(hello));
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("1");
    expect((await res.json()).error).toEqual({
      message: expect.stringMatching(/^The rate limiter's store is unreachable and it is set to refuse requests until it is back \(fail-closed\)/),
      type: "rate_limit_error",
      code: "rate_limit_exceeded",
      param: null,
    });
    expect(probe.calls).toHaveLength(0);
  });
});
