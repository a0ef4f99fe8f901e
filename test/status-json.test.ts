/**
 * `GET /ui/status.json` (README, "Status page") over both transports: what the router counted of
 * real traffic (the `/v1/` requests only: the probes and the page's own polling are not counted),
 * a failing target's circuit open with the time to its probe, and the rate-limit counters after a
 * refusal; `GET /ui` without a key, with a content security policy that names its script by hash.
 * The same figures in a browser: test/ui-page.test.ts.
 */
import { createHash } from "node:crypto";
import OpenAI from "openai";
import { afterEach, beforeAll, afterAll, describe, expect, it } from "vitest";
import type { ModelmuxConfig } from "@modelmux/core";
import type { StatusReply } from "../core/src/status-page/status.ts";
import { CHAOS_ERRORS, startChaosUpstream, type ChaosUpstream } from "./helpers/chaos-upstream.ts";
import { startHarness, testConfig, TEST_KEY, TRANSPORTS, type Harness } from "./helpers/harness.ts";

const ADMIN_KEY = "sk-admin-status-0123456789";
const CHAOS = "chaos/gpt-4o";
const ECHO = "echo/echo-1";
const hello = (model: string) => ({ model, messages: [{ role: "user" as const, content: "count me" }] });

let upstream: ChaosUpstream;
beforeAll(async () => {
  upstream = await startChaosUpstream({ name: "chaos" });
});
afterAll(() => upstream?.close());

function config(): ModelmuxConfig {
  return testConfig(
    {
      echo: { plugin: "provider-echo", models: ["echo-1"] },
      chaos: { plugin: "provider-openai", base_url: upstream.openaiBaseUrl, api_key: "sk-chaos", models: ["gpt-4o"] },
    },
    {
      auth: {
        api_keys: [
          { key: TEST_KEY, app: "test-app", developer: "tester" },
          { key: ADMIN_KEY, app: "ops", developer: "root", admin: true },
        ],
      },
      // One failure opens a circuit for a minute; no retry, no fallback: one failure is one reply.
      routing: { retry: { attempts: 0 }, circuit_breaker: { failures: 1, cooldown: "60s" } },
      rate_limit: { app: { requests: 3, window: "1h" } },
    },
  );
}

describe.each(TRANSPORTS)("the status figures over %s", (transport) => {
  let h: Harness;
  afterEach(() => h?.close());

  const status = async (key = ADMIN_KEY) => {
    const reply = await h.request("/ui/status.json", { headers: { authorization: `Bearer ${key}` } });
    expect(reply.status).toBe(200);
    expect(reply.headers.get("cache-control")).toBe("no-store");
    return (await reply.json()) as StatusReply;
  };

  it("counts the /v1/ requests, opens the failing target's circuit, and shows the rate-limit counters after a refusal", async () => {
    h = await startHarness(config(), transport);
    const openai = new OpenAI({ baseURL: h.baseURL, apiKey: TEST_KEY, maxRetries: 0, fetch: (input, init) => h.request(new URL(String(input)).pathname, init) });
    const ok = await openai.chat.completions.create(hello(ECHO));
    upstream.script(CHAOS_ERRORS.serverError);
    const failed = await openai.chat.completions.create(hello(CHAOS)).catch((error: InstanceType<typeof OpenAI.APIError>) => error);
    expect(failed).toBeInstanceOf(OpenAI.APIError);
    const failedCode = (failed as InstanceType<typeof OpenAI.APIError>).code!;
    await openai.chat.completions.create(hello(ECHO));
    const refused = await openai.chat.completions.create(hello(ECHO)).catch((error: InstanceType<typeof OpenAI.APIError>) => error);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(429);
    // Not API traffic: never counted.
    expect((await h.request("/healthz")).status).toBe(200);
    expect((await h.request("/v1/models", { headers: { authorization: `Bearer ${TEST_KEY}` } })).status).toBe(200);

    const before = await status();
    const again = await status();
    for (const s of [before, again]) {
      const hour = s.ranges.hour;
      expect(hour.requests).toBe(5);
      expect(hour.errors).toBe(2);
      expect(hour.errors_by_code).toEqual({ [failedCode]: 1, rate_limit_exceeded: 1 });
      expect(hour.series.reduce((sum, p) => sum + p.requests, 0)).toBe(5);
      expect(s.ranges.day.requests).toBe(5);
      expect(hour.usage.by_app).toEqual([expect.objectContaining({ name: "test-app", requests: 5, errors: 2 })]);
      const echo = hour.usage.by_model.find((row) => row.name === ECHO)!;
      expect(echo).toMatchObject({ requests: 3, errors: 1 });
      expect(echo.prompt_tokens).toBe(2 * ok.usage!.prompt_tokens);
    }

    const chaos = before.targets.find((t) => t.model === CHAOS)!;
    expect(chaos).toMatchObject({ provider: "chaos", circuit: "open", failures: 1, health: "down", recent: { minutes: 5, attempts: 1, failures: 1 } });
    expect(chaos.probe_in_ms).toBeGreaterThan(50_000);
    expect(chaos.probe_in_ms).toBeLessThanOrEqual(60_000);
    // The 429 was the router's own limit, taken within the echo's attempt: an attempt, not the target's failure.
    expect(before.targets.find((t) => t.model === ECHO)).toEqual({ model: ECHO, provider: "echo", circuit: "closed", failures: 0, health: "ok", recent: { minutes: 5, attempts: 3, failures: 0 } });

    expect(before.rate_limits!.rules).toEqual([{ scope: "app", name: "*", limit: { requests: 3, window_ms: 3_600_000 } }]);
    expect(before.rate_limits!.latest).toEqual([
      expect.objectContaining({ key: "app:test-app", scope: "app", name: "test-app", limit: { requests: 3, window_ms: 3_600_000 }, remaining: { requests: 0 } }),
    ]);
    expect(before.rate_limits!.latest[0]!.retry_after_ms).toBeGreaterThan(0);
  });

  it("serves the page without a key, its script allowed by hash and nothing else; the figures need an admin key", async () => {
    h = await startHarness(config(), transport);
    const page = await h.request("/ui");
    expect(page.status).toBe(200);
    const html = await page.text();
    const policy = page.headers.get("content-security-policy")!;
    const script = /<script>([\s\S]*)<\/script>/.exec(html)![1]!;
    expect(policy).toContain(`script-src 'sha256-${createHash("sha256").update(script).digest("base64")}'`);
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("frame-ancestors 'none'");
    // Nothing loaded from elsewhere: the only URL in it is SVG's namespace.
    expect(html).not.toMatch(/\bsrc=|<link rel="stylesheet"/);
    expect(html.replaceAll("http://www.w3.org/2000/svg", "")).not.toMatch(/https?:\/\//);
    expect((await h.request("/ui/status.json")).status).toBe(401);
    expect((await h.request("/ui/status.json", { headers: { authorization: `Bearer ${TEST_KEY}` } })).status).toBe(403);
    expect((await status()).rate_limits!.latest).toEqual([]);
  });
});
