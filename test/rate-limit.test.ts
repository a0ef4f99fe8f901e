/**
 * End-to-end: rate limits (docs/interface.md, "Rate limits") on the in-process limiter, over both
 * transports, with the openai SDK as client. Each case builds its own router, so counters start
 * empty. The probe provider counts upstream calls: a refused request must never reach it.
 */
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { defineProvider, providerError, type ChatCompletionChunk, type ModelmuxConfig } from "@modelmux/core";
import { postJson, readSse, startHarness, testConfig, TEST_KEY, TRANSPORTS, type Harness, type Transport } from "./helpers/harness.ts";
import { createProbe } from "./helpers/probe-provider.ts";

const { plugin: probePlugin, state: probe } = createProbe();
const BOB_KEY = "sk-test-bob-0123456789abcdef";
const VIP_KEY = "sk-test-vip-0123456789abcdef";
const OTHER_APP_KEY = "sk-test-other-app-0123456789";
const CHAT = "/v1/chat/completions";
const hello = { model: "acme/m1", messages: [{ role: "user" as const, content: "hi" }] };
const echoHello = { model: "echo/echo-1", messages: [{ role: "user" as const, content: "hello there" }] };

/**
 * A provider whose stream sends one chunk, then waits for the client to leave: the reservation
 * of an abandoned stream must be released.
 */
const hangingPlugin = defineProvider({
  name: "hanging",
  optionsSchema: { type: "object" },
  setup: () => ({
    capabilities: () => ({}),
    chat: async () => {
      throw new Error("not used");
    },
    async chatStream(_request, call) {
      return (async function* () {
        const chunk: ChatCompletionChunk = { id: "c", object: "chat.completion.chunk", created: 0, model: call.model, choices: [{ index: 0, delta: { role: "assistant", content: "wait" }, finish_reason: null }] };
        yield chunk;
        await new Promise((resolve) => call.signal.addEventListener("abort", resolve, { once: true }));
        throw call.signal.reason;
      })();
    },
  }),
});

const providers: ModelmuxConfig["providers"] = {
  acme: { plugin: "probe", models: ["m1"] },
  echo: { plugin: "provider-echo", models: ["echo-1"] },
  slow: { plugin: "hanging", models: ["s1"] },
};
const keys = [
  { key: TEST_KEY, app: "test-app", developer: "tester" },
  { key: BOB_KEY, app: "test-app", developer: "bob" },
  { key: VIP_KEY, app: "vip-app", developer: "vip" },
  { key: OTHER_APP_KEY, app: "other-app", developer: "tester" },
];

function configWith(rateLimit: ModelmuxConfig["rate_limit"], extra: Partial<ModelmuxConfig> = {}): ModelmuxConfig {
  return testConfig(providers, { auth: { api_keys: keys }, ...(rateLimit && { rate_limit: rateLimit }), ...extra });
}

function rateHeaders(headers: Headers): Record<string, string> {
  const picked: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (name.startsWith("x-ratelimit-") || name.startsWith("retry-after")) picked[name] = value;
  });
  return picked;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const transport of TRANSPORTS) {
  describe(`rate limits (${transport})`, () => {
    let h: Harness | undefined;
    const start = async (config: ModelmuxConfig, t: Transport = transport) => {
      h = await startHarness(config, t, { plugins: { probe: probePlugin, hanging: hangingPlugin } });
      probe.calls.length = 0;
      probe.error = undefined;
      return h;
    };
    afterEach(async () => {
      await h?.close();
      h = undefined;
    });

    it("sends x-ratelimit-* headers on successful replies, counting down", async () => {
      const r = await start(configWith({ developer: { requests: 3, window: "60s" } }));
      const seen: Record<string, string>[] = [];
      for (let i = 0; i < 2; i++) {
        const { response } = await r.openai.chat.completions.create(hello).withResponse();
        seen.push(rateHeaders(response.headers));
      }
      expect(seen[0]).toEqual({ "x-ratelimit-limit-requests": "3", "x-ratelimit-remaining-requests": "2", "x-ratelimit-reset-requests": expect.stringMatching(/^(59(\.\d+)?s|1m0s)$/) });
      expect(seen[1]!["x-ratelimit-remaining-requests"]).toBe("1");
    });

    it("refuses the request over the limit with the 429 envelope, retry-after and headers, before the provider", async () => {
      const r = await start(configWith({ developer: { requests: 2, window: "60s" } }));
      await r.openai.chat.completions.create(hello);
      await r.openai.chat.completions.create(hello);
      expect(probe.calls).toHaveLength(2);
      const res = await r.request(CHAT, postJson(hello));
      expect(res.status).toBe(429);
      expect(await res.json()).toEqual({
        error: { message: expect.stringMatching(/^Rate limit reached for developer 'tester': 2 requests per 1m0s\. Try again in \d/), type: "rate_limit_error", code: "rate_limit_exceeded", param: null },
      });
      const retryAfter = Number(res.headers.get("retry-after"));
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThanOrEqual(59);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(Number(res.headers.get("retry-after-ms"))).toBeGreaterThan(58_000);
      expect(res.headers.get("x-request-id")).toMatch(/\S/);
      expect(rateHeaders(res.headers)).toMatchObject({ "x-ratelimit-limit-requests": "2", "x-ratelimit-remaining-requests": "0" });
      const error = await r.openai.chat.completions.create(hello).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.RateLimitError);
      expect(probe.calls).toHaveLength(2);
    });

    it("sends the headers on a streamed reply before its first event", async () => {
      const r = await start(configWith({ app: { requests: 5, tokens: 10_000, window: "60s" } }));
      const res = await r.request(CHAT, postJson({ ...echoHello, stream: true }));
      expect(res.status).toBe(200);
      expect(rateHeaders(res.headers)).toMatchObject({ "x-ratelimit-remaining-requests": "4", "x-ratelimit-limit-tokens": "10000", "x-ratelimit-remaining-tokens": "10000" });
      const reader = res.body!.getReader();
      const first = await reader.read();
      expect(new TextDecoder().decode(first.value)).toMatch(/^data: /);
      await reader.cancel();
      const { response } = await r.openai.chat.completions.create({ ...echoHello, stream: true }).withResponse();
      expect(response.headers.get("x-ratelimit-remaining-requests")).toBe("3");
    });

    it("counts developers apart and an app's developers together; overrides and exemptions apply", async () => {
      const r = await start(
        configWith({
          app: { requests: 3, window: "60s" },
          developer: { requests: 2, window: "60s" },
          apps: { "vip-app": false },
          developers: { vip: { requests: 4, window: "60s" } },
        }),
      );
      const ok = async (key: string) => (await r.request(CHAT, postJson(hello, { authorization: `Bearer ${key}` }))).status;
      expect([await ok(TEST_KEY), await ok(TEST_KEY), await ok(TEST_KEY)]).toEqual([200, 200, 429]); // developer tester: 2
      expect([await ok(BOB_KEY), await ok(BOB_KEY)]).toEqual([200, 429]); // app test-app: 3 in all
      expect(await ok(OTHER_APP_KEY)).toBe(429); // the same developer in another app: still tester
      expect(await Promise.all([1, 2, 3, 4, 5].map(() => ok(VIP_KEY)))).toEqual([200, 200, 200, 200, 429]); // app exempt, developer override 4
    });

    it("applies providers.<name>.rate_limit to every caller of that provider only", async () => {
      const r = await start(testConfig({ ...providers, acme: { plugin: "probe", models: ["m1"], rate_limit: { requests: 2, window: "60s" } } }, { auth: { api_keys: keys } }));
      expect((await r.request(CHAT, postJson(hello))).status).toBe(200);
      expect((await r.request(CHAT, postJson(hello, { authorization: `Bearer ${BOB_KEY}` }))).status).toBe(200);
      const refused = await r.request(CHAT, postJson(hello, { authorization: `Bearer ${VIP_KEY}` }));
      expect(refused.status).toBe(429);
      expect((await refused.json()).error.message).toMatch(/^Rate limit reached for provider 'acme': 2 requests per 1m0s/);
      expect((await r.request(CHAT, postJson(echoHello))).status).toBe(200);
      expect(probe.calls).toHaveLength(2);
    });

    it("admits again once the window has rolled over", async () => {
      const r = await start(configWith({ developer: { requests: 2, window: "1s" } }));
      expect((await r.request(CHAT, postJson(hello))).status).toBe(200);
      expect((await r.request(CHAT, postJson(hello))).status).toBe(200);
      const refused = await r.request(CHAT, postJson(hello));
      expect(refused.status).toBe(429);
      expect(refused.headers.get("retry-after")).toBe("1");
      const waitMs = Number(refused.headers.get("retry-after-ms"));
      expect(waitMs).toBeLessThanOrEqual(1000);
      await sleep(waitMs + 20);
      expect((await r.request(CHAT, postJson(hello))).status).toBe(200);
    });

    it("counts the tokens a streamed reply really used, and refuses once they are spent", async () => {
      const r = await start(configWith({ developer: { requests: 100, tokens: 15, window: "60s" } }));
      const stream = await r.openai.chat.completions.create({ ...echoHello, stream: true, stream_options: { include_usage: true } });
      let used = 0;
      for await (const chunk of stream) used += chunk.usage?.total_tokens ?? 0;
      expect(used).toBe(6); // "hello there": 3 prompt + 3 completion tokens (echo counts 4 characters a token)
      // No include_usage this time: the usage is counted all the same.
      const { response: second } = await r.openai.chat.completions.create({ ...echoHello, stream: true }).withResponse();
      expect(second.headers.get("x-ratelimit-remaining-tokens")).toBe("9");
      await readSse(second);
      const { response: third } = await r.openai.chat.completions.create(echoHello).withResponse();
      expect(third.headers.get("x-ratelimit-remaining-tokens")).toBe("3");
      const refused = await r.request(CHAT, postJson(echoHello));
      expect(refused.status).toBe(429);
      expect((await refused.json()).error.message).toMatch(/^Rate limit reached for developer 'tester': 15 tokens per 1m0s/);
      expect(rateHeaders(refused.headers)).toMatchObject({ "x-ratelimit-limit-tokens": "15", "x-ratelimit-remaining-tokens": "0", "x-ratelimit-remaining-requests": "97" });
    });

    it("reserves max_completion_tokens until the reply, and refuses a reservation no window can hold", async () => {
      const r = await start(configWith({ developer: { requests: 100, tokens: 100, window: "60s" } }));
      const tooLarge = await r.request(CHAT, postJson({ ...hello, max_completion_tokens: 101 }));
      expect(tooLarge.status).toBe(429);
      expect((await tooLarge.json()).error).toMatchObject({
        type: "rate_limit_error",
        code: "rate_limit_exceeded",
        param: "max_completion_tokens",
        message: expect.stringMatching(/^Request too large for developer 'tester': 100 tokens per 1m0s: max_completion_tokens is 101/),
      });
      expect(probe.calls).toHaveLength(0);
      // A stream held open keeps its reservation of 80: a request reserving 30 more does not fit.
      const client = new AbortController();
      const held = await r.request(CHAT, { ...postJson({ model: "slow/s1", stream: true, max_tokens: 80, messages: [{ role: "user", content: "x" }] }), signal: client.signal });
      expect(held.headers.get("x-ratelimit-remaining-tokens")).toBe("20");
      const reader = held.body!.getReader();
      await reader.read();
      expect((await r.request(CHAT, postJson({ ...hello, max_tokens: 30 }))).status).toBe(429);
      // The client leaves: the reservation is released without any usage.
      client.abort();
      await sleep(50);
      const after = await r.request(CHAT, postJson({ ...hello, max_tokens: 30 }));
      expect(after.status).toBe(200);
      expect(after.headers.get("x-ratelimit-remaining-tokens")).toBe("70");
    });

    it("releases the reservation of a failed call, and passes a provider's own 429 on with its retry-after", async () => {
      const r = await start(configWith({ developer: { requests: 100, tokens: 100, window: "60s" } }));
      // Longer than routing.retry.max_retry_after (30 s): passed on at once, not waited for a retry.
      probe.error = providerError("acme", { status: 429, message: "slow down", retryAfter: "60" });
      const limited = await r.request(CHAT, postJson({ ...hello, max_tokens: 90 }));
      expect(limited.status).toBe(429);
      expect(limited.headers.get("retry-after")).toBe("60");
      expect((await limited.json()).error).toEqual({ message: "acme: slow down", type: "rate_limit_error", code: "rate_limit_exceeded", param: null });
      // Ours are there too, and say our limits still have room.
      expect(limited.headers.get("x-ratelimit-remaining-requests")).toBe("99");
      probe.error = undefined;
      const next = await r.request(CHAT, postJson({ ...hello, max_tokens: 90 }));
      expect(next.status).toBe(200);
      expect(next.headers.get("x-ratelimit-remaining-tokens")).toBe("10");
    });

    it("does not count requests refused for another reason", async () => {
      const r = await start(configWith({ developer: { requests: 1, window: "60s" } }));
      expect((await r.request(CHAT, postJson({ ...hello, temperature: 9 }))).status).toBe(400);
      expect((await r.request(CHAT, postJson({ ...hello, model: "acme/nope" }))).status).toBe(404);
      expect((await r.request(CHAT, postJson(hello, { authorization: "Bearer wrong" }))).status).toBe(401);
      expect((await r.request(CHAT, postJson(hello))).status).toBe(200);
    });

    it("sends no x-ratelimit-* header when no limit is configured", async () => {
      const r = await start(configWith(undefined));
      const { response } = await r.openai.chat.completions.create(hello).withResponse();
      expect(rateHeaders(response.headers)).toEqual({});
    });
  });
}
