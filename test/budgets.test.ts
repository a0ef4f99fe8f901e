/**
 * Budgets end to end (README, "Budgets"): `cost` in a rate limit, on the in-process limiter, over
 * both transports. The echo provider counts a token per 4 characters, so every amount is known:
 * "hello there" is 3 prompt and 3 completion tokens, and a reservation is the body's bytes / 4 at
 * the input price plus `max_tokens` at the output price. Amounts are read from the
 * `x-ratelimit-*-cost` headers.
 */
import { afterEach, describe, expect, it } from "vitest";
import { defineProvider, providerError, type ChatCompletion, type ModelmuxConfig } from "@modelmux/core";
import { postJson, startHarness, testConfig, TRANSPORTS, type Harness } from "./helpers/harness.ts";
import { createProbe } from "./helpers/probe-provider.ts";

/** USD per million tokens: $0.0001 a prompt token, $0.001 a completion token. */
const PRICE = { input: 100, output: 1000 };
/** The fallback's price: twice as dear. */
const PRICE_B = { input: 200, output: 2000 };
const CHAT = "/v1/chat/completions";
const MONTH_S = 30 * 86_400;
/** A 30-day window counts amounts in buckets of a hundredth of it: 7.2 hours. */
const BUCKET_H = 7.2;
/** The hours of a reset in OpenAI's notation (`715h12m3.5s`). */
const hoursOf = (reset: string) => {
  const [, h, m, s] = /^(\d+)h(\d+)m([\d.]+)s$/.exec(reset)!;
  return Number(h) + Number(m) / 60 + Number(s) / 3600;
};
const hello = (model: string, max_tokens?: number) => ({ model, messages: [{ role: "user" as const, content: "hello there" }], ...(max_tokens !== undefined && { max_tokens }) });
/** "hello there" on the echo: 3 prompt and 3 completion tokens. */
const helloCost = (price = PRICE) => (3 * price.input + 3 * price.output) / 1e6;
/** What `body` reserves: its bytes / 4 at the input price, and its max_tokens (default 4096) at the output price. */
const reservationOf = (body: { max_tokens?: number }, price = PRICE) => (Math.ceil(Buffer.byteLength(JSON.stringify(body)) / 4) * price.input + (body.max_tokens ?? 4096) * price.output) / 1e6;

/** A provider that reports more usage than a request reserved: 10 prompt and 10 completion tokens, whatever it was asked. */
const overrunPlugin = defineProvider({
  name: "overrun",
  optionsSchema: { type: "object" },
  setup: () => ({
    capabilities: () => ({}),
    async chat(_request, call): Promise<ChatCompletion> {
      return {
        id: "chatcmpl-overrun",
        object: "chat.completion",
        created: 0,
        model: call.model,
        choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "ok" } }],
        usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
      };
    },
    async chatStream() {
      throw new Error("not used");
    },
  }),
});
const { plugin: probePlugin, state: probe, reset: resetProbe } = createProbe();
const plugins = { overrun: overrunPlugin, probe: probePlugin };

const providers: ModelmuxConfig["providers"] = {
  echo: { plugin: "provider-echo", models: ["echo-1"] },
  free: { plugin: "provider-echo", models: ["echo-1"] },
  over: { plugin: "overrun", models: ["o1"] },
};
const pricing = { "echo/echo-1": PRICE, "over/o1": PRICE };

function budget(cost: number): ModelmuxConfig {
  return testConfig(providers, { pricing, rate_limit: { app: { cost, window: "30d" } } });
}

function costHeaders(headers: Headers) {
  return {
    limit: headers.get("x-ratelimit-limit-cost"),
    remaining: Number(headers.get("x-ratelimit-remaining-cost")),
    reset: headers.get("x-ratelimit-reset-cost"),
  };
}

describe.each(TRANSPORTS)("budgets (%s)", (transport) => {
  let h: Harness | undefined;
  const start = async (config: ModelmuxConfig) => (h = await startHarness(config, transport, { plugins }));
  afterEach(async () => {
    await h?.close();
    h = undefined;
    resetProbe();
  });

  it("reserves what a request could cost, then counts its real cost: the unused reservation comes back", async () => {
    const r = await start(budget(1));
    const body = hello("echo/echo-1", 10);
    const first = await r.request(CHAT, postJson(body));
    expect(first.status).toBe(200);
    expect(costHeaders(first.headers)).toEqual({ limit: "1", remaining: expect.closeTo(1 - reservationOf(body), 9), reset: expect.stringMatching(/^\d+h\d+m[\d.]+s$/) });
    expect(hoursOf(costHeaders(first.headers).reset!)).toBeGreaterThan(720 - BUCKET_H);
    expect(hoursOf(costHeaders(first.headers).reset!)).toBeLessThanOrEqual(720);
    await first.json();
    // Settled at $0.0033, not the $0.0123 it held: the second request sees only the first's real cost.
    const { data, response } = await r.openai.chat.completions.create(body).withResponse();
    expect(data.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 3 });
    expect(costHeaders(response.headers).remaining).toBeCloseTo(1 - helloCost() - reservationOf(body), 9);
  });

  it("refuses a request whose max_tokens could cost more than remains, naming the budget, with headers and retry-after", async () => {
    const r = await start(budget(0.01));
    const body = hello("echo/echo-1", 3);
    expect(reservationOf(body)).toBeCloseTo(0.0053, 9);
    for (let i = 0; i < 2; i++) expect((await r.request(CHAT, postJson(body))).status).toBe(200);
    // $0.0066 spent, $0.0034 left: the third could cost $0.0053.
    const refused = await r.request(CHAT, postJson(body));
    expect(refused.status).toBe(429);
    expect((await refused.json()).error).toEqual({
      // The window slides by buckets of 7.2 hours for amounts (README "Budgets").
      message: expect.stringMatching(
        /^The app 'test-app' budget of \$0\.01 per 30d has \$0\.0034 left, less than this request could cost \(\$0\.0053\); resets in (30d|29d (1[7-9]|2[0-3])h), or ask for fewer output tokens\.$/,
      ),
      type: "rate_limit_error",
      code: "rate_limit_exceeded",
      param: null,
    });
    expect(costHeaders(refused.headers)).toMatchObject({ limit: "0.01", remaining: 0.0034 });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(MONTH_S - BUCKET_H * 3600);
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(MONTH_S);
    expect(refused.headers.get("x-modelmux-attempts")).toBeNull();
    // Asking for fewer output tokens fits: $0.0023 of prompt and $0.001 of output.
    const smaller = await r.request(CHAT, postJson(hello("echo/echo-1", 1)));
    expect(smaller.status).toBe(200);
    expect(costHeaders(smaller.headers).remaining).toBeCloseTo(0.0001, 9);
  });

  it("stops the app at its cap: once spent, every request of the app is refused, priced or not", async () => {
    const r = await start(budget(0.05));
    // Each reserves $0.0032 and really costs $0.011 (the provider reports 10 + 10 tokens).
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await r.request(CHAT, postJson(hello("over/o1", 1)))).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const spent = await r.request(CHAT, postJson(hello("free/echo-1", 1)));
    expect(spent.status).toBe(429);
    expect((await spent.json()).error.message).toMatch(
      /^The app 'test-app' budget of \$0\.05 per 30d is spent: \$0\.055 used; resets in (30d|29d (1[7-9]|2[0-3])h)\.$/,
    );
    expect(costHeaders(spent.headers)).toMatchObject({ limit: "0.05", remaining: 0 });
  });

  it("refuses a reservation larger than the whole budget, naming the field or the default it reserved", async () => {
    const r = await start(budget(1));
    const large = await r.request(CHAT, postJson(hello("echo/echo-1", 2000)));
    expect(large.status).toBe(429);
    expect((await large.json()).error).toMatchObject({
      param: "max_tokens",
      message: expect.stringMatching(/^Request too large for the app 'test-app' budget of \$1 per 30d: at echo\/echo-1's price it could cost up to \$2\.00 \(max_tokens 2000, about 24 prompt tokens\)\. Ask for fewer output tokens\.$/),
    });
    const unset = await r.request(CHAT, postJson(hello("echo/echo-1")));
    expect(unset.status).toBe(429);
    expect((await unset.json()).error).toMatchObject({ param: null, message: expect.stringContaining("4096 output tokens reserved when no max_completion_tokens, max_tokens or max_output_tokens is set") });
    // Nothing was counted: the whole budget is there.
    const ok = await r.request(CHAT, postJson(hello("echo/echo-1", 3)));
    expect(costHeaders(ok.headers).remaining).toBeCloseTo(1 - reservationOf(hello("echo/echo-1", 3)), 9);
  });

  it("reserves 4096 output tokens for a request without max_tokens", async () => {
    const r = await start(budget(10));
    const body = hello("echo/echo-1");
    const res = await r.request(CHAT, postJson(body));
    expect(res.status).toBe(200);
    expect(costHeaders(res.headers).remaining).toBeCloseTo(10 - reservationOf(body), 9);
  });

  it("neither reserves nor counts anything for a model without a price", async () => {
    const r = await start(budget(0.01));
    for (let i = 0; i < 3; i++) {
      const res = await r.request(CHAT, postJson(hello("free/echo-1")));
      expect(res.status).toBe(200);
      expect(costHeaders(res.headers)).toMatchObject({ limit: "0.01", remaining: 0.01 });
      await res.json();
    }
  });

  it("passes over a target whose provider's budget has too little left: the fallback answers, at its own price", async () => {
    const config = testConfig(
      { a: { plugin: "provider-echo", models: ["echo-1"], rate_limit: { cost: 0.01, window: "30d" } }, b: { plugin: "provider-echo", models: ["echo-1"] } },
      { pricing: { "a/echo-1": PRICE, "b/echo-1": PRICE_B }, fallbacks: { "a/echo-1": ["b/echo-1"] }, rate_limit: { app: { cost: 1, window: "30d" } } },
    );
    const r = await start(config);
    const body = hello("a/echo-1", 3);
    const models: Array<string | null> = [];
    for (let i = 0; i < 4; i++) {
      const res = await r.request(CHAT, postJson(body));
      expect(res.status).toBe(200);
      expect(res.headers.get("x-modelmux-attempts")).toBe("1");
      models.push(res.headers.get("x-modelmux-model"));
      if (i === 3) expect(costHeaders(res.headers).remaining).toBeCloseTo(1 - 2 * helloCost() - helloCost(PRICE_B) - reservationOf(body, PRICE_B), 9);
      await res.json();
    }
    expect(models).toEqual(["a/echo-1", "a/echo-1", "b/echo-1", "b/echo-1"]);
  });

  it("counts a fallback's answer for the app at the fallback's price, and nothing for the provider that failed", async () => {
    const config = testConfig(
      { a: { plugin: "probe", models: ["m1"], rate_limit: { cost: 0.5, window: "30d" }, retry: { attempts: 1 } }, b: { plugin: "provider-echo", models: ["echo-1"] }, free: { plugin: "provider-echo", models: ["echo-1"] } },
      { pricing: { "a/m1": PRICE, "b/echo-1": PRICE_B }, fallbacks: { "a/m1": ["b/echo-1"] }, rate_limit: { app: { cost: 1, window: "30d" } } },
    );
    const r = await start(config);
    probe.error = providerError("a", { status: 500, message: "down" });
    const body = hello("a/m1", 3);
    const fellBack = await r.request(CHAT, postJson(body));
    expect(fellBack.status).toBe(200);
    expect(fellBack.headers.get("x-modelmux-model")).toBe("b/echo-1");
    await fellBack.json();
    probe.error = undefined;
    // Provider a's budget is the tighter: it holds this request's reservation, and nothing of the failed call.
    const answered = await r.request(CHAT, postJson(body));
    expect(answered.headers.get("x-modelmux-model")).toBe("a/m1");
    expect(costHeaders(answered.headers)).toMatchObject({ limit: "0.5", remaining: expect.closeTo(0.5 - reservationOf(body), 9) });
    await answered.json();
    // The app's budget, alone on an unpriced model: the fallback's answer at b's price, and the probe's (1 + 1 tokens) at a's.
    const app = await r.request(CHAT, postJson(hello("free/echo-1")));
    expect(costHeaders(app.headers)).toMatchObject({ limit: "1", remaining: expect.closeTo(1 - helloCost(PRICE_B) - (PRICE.input + PRICE.output) / 1e6, 9) });
  });
});

describe("budgets in the config", () => {
  const start = (config: ModelmuxConfig) => startHarness(config, "fetch", { plugins }).then((r) => r.close().then(() => "started"), (error: Error) => error.message);

  it("refuses a budget that could never count anything, naming its path", async () => {
    expect(await start(testConfig(providers, { rate_limit: { app: { cost: 5, window: "30d" } } }))).toBe(
      "rate_limit.app.cost: a budget counts the cost of priced models only, and pricing names no model: it would never count anything (add prices under pricing)",
    );
    const provider = testConfig({ ...providers, free: { ...providers.free!, rate_limit: { cost: 5, window: "1d" } } }, { pricing });
    expect(await start(provider)).toBe(
      "providers.free.rate_limit.cost: a budget counts the cost of priced models only, and pricing names no model of provider 'free': it would never count anything (add prices under pricing)",
    );
  });

  it("refuses a cost of 0 and a limit with nothing to limit, and takes a budget alone", async () => {
    expect(await start(testConfig(providers, { pricing, rate_limit: { developers: { alice: { cost: 0, window: "1d" } } } }))).toBe("rate_limit.developers.alice.cost: must be > 0");
    expect(await start(testConfig(providers, { pricing, rate_limit: { developer: { window: "1d" } } }))).toBe("rate_limit.developer: must set requests, tokens or cost (at least one) besides window");
    expect(await start(testConfig(providers, { pricing, rate_limit: { developer: { cost: 2.5, window: "1d" } } }))).toBe("started");
  });
});
