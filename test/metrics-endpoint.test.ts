/**
 * `GET /metrics` (README, "Metrics") over both transports: admin keys only (401 without a valid
 * credential, 403 for any other key or an identity-provider token), HEAD, the Prometheus content
 * type; a stream counted on either way of writing it; rate-limit refusals by scope; one registry
 * per router; and the cap on the label values a flood of identity-provider tokens with new app and
 * developer claims can make.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ModelmuxConfig, RouterOptions } from "@modelmux/core";
import { AUDIENCE, ISSUER, signer, startJwksServer, type JwksServer, type Signer } from "./fixtures/jwks-server.ts";
import { postJson, startHarness, testConfig, TEST_KEY, TRANSPORTS, type Harness, type Transport } from "./helpers/harness.ts";
import { labelValues, parseMetrics, samplesOf, total, type Sample } from "./helpers/prometheus-text.ts";

const ADMIN_KEY = "sk-metrics-admin-0123456789";
const ECHO = "echo/echo-1";
const hello = (content: string) => ({ model: ECHO, messages: [{ role: "user" as const, content }] });
const bearer = (value: string) => ({ headers: { authorization: `Bearer ${value}` } });

let idp: JwksServer;
let idpKey: Signer;
beforeAll(async () => {
  idpKey = await signer("key-1");
  idp = await startJwksServer([idpKey.jwk]);
});
afterAll(() => idp.close());

function config(): ModelmuxConfig {
  return testConfig(
    { echo: { plugin: "provider-echo", models: ["echo-1"] } },
    {
      auth: {
        api_keys: [
          { key: TEST_KEY, app: "test-app", developer: "tester" },
          { key: ADMIN_KEY, app: "ops", developer: "root", admin: true },
        ],
        jwt: { issuer: ISSUER, audience: AUDIENCE, jwks_url: idp.jwksUrl },
      },
    },
  );
}

const harnesses: Harness[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()));
});

async function start(transport: Transport, options: RouterOptions = {}, edit?: (config: ModelmuxConfig) => void): Promise<Harness> {
  const routerConfig = config();
  edit?.(routerConfig);
  const h = await startHarness(routerConfig, transport, options);
  harnesses.push(h);
  return h;
}

async function scrape(h: Harness): Promise<Sample[]> {
  const res = await h.request("/metrics", bearer(ADMIN_KEY));
  expect(res.status).toBe(200);
  return parseMetrics(await res.text());
}

describe.each(TRANSPORTS)("GET /metrics over %s", (transport) => {
  it("answers admin keys only, GET and HEAD, as Prometheus text that is never cached", async () => {
    const h = await start(transport);
    for (const [init, status, code] of [
      [{}, 401, "invalid_api_key"],
      [bearer("sk-nobody-0123456789"), 401, "invalid_api_key"],
      [bearer(TEST_KEY), 403, "admin_required"],
      [bearer(await idpKey.sign()), 403, "admin_required"],
    ] as const) {
      const res = await h.request("/metrics", init);
      expect(res.status).toBe(status);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe(code);
    }
    const res = await h.request("/metrics", bearer(ADMIN_KEY));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("x-request-id")).toBeTruthy();
    const text = await res.text();
    expect(text).toContain("# TYPE modelmux_requests_total counter");
    const head = await h.request("/metrics", { method: "HEAD", ...bearer(ADMIN_KEY) });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(await head.text()).toBe("");
    expect((await h.request("/metrics", { method: "POST", ...bearer(ADMIN_KEY) })).status).toBe(405);
    // No process metrics unless asked for.
    expect(text).not.toContain("process_cpu");

    const s = await scrape(h);
    expect(samplesOf(s, "modelmux_requests_total", { endpoint: "/metrics" }).map((x) => `${x.labels.method} ${x.labels.status} ${x.labels.code} = ${x.value}`).sort()).toEqual([
      "GET 200 none = 1",
      "GET 401 invalid_api_key = 2",
      "GET 403 admin_required = 2",
      "HEAD 200 none = 1",
      "POST 405 method_not_allowed = 1",
    ]);
  });

  it("counts a JSON reply and a stream, and its endpoint for a request refused before its route", async () => {
    const h = await start(transport);
    const json = await h.openai.chat.completions.create(hello("count me"));
    const stream = await h.openai.chat.completions.create({ ...hello("stream me"), stream: true, stream_options: { include_usage: true } });
    let streamed = 0;
    for await (const chunk of stream) streamed += chunk.usage?.completion_tokens ?? 0;
    expect((await h.request("/v1/chat/completions", { method: "POST", body: "{}" })).status).toBe(401);
    expect((await h.request("/v1/nothing", bearer(TEST_KEY))).status).toBe(404);
    expect((await h.request("/v1/models/", bearer(TEST_KEY))).status).toBe(404);

    const s = await scrape(h);
    const requests = (labels: Record<string, string>) => total(s, "modelmux_requests_total", labels);
    expect(requests({ endpoint: "/v1/chat/completions", provider: "echo", model: "echo-1", status: "200", outcome: "ok", stream: "false" })).toBe(1);
    expect(requests({ endpoint: "/v1/chat/completions", provider: "echo", model: "echo-1", status: "200", outcome: "ok", stream: "true" })).toBe(1);
    // `auth` refused it before its route ran: h3's match names the endpoint.
    expect(requests({ endpoint: "/v1/chat/completions", provider: "none", status: "401", code: "invalid_api_key" })).toBe(1);
    // No route, and a trailing slash h3 forgives and the router does not.
    expect(requests({ endpoint: "unmatched", status: "404", code: "not_found" })).toBe(2);
    expect(total(s, "modelmux_tokens_total", { app: "test-app", developer: "tester", kind: "output" })).toBe(json.usage!.completion_tokens + streamed);
    expect(total(s, "modelmux_time_to_first_token_seconds_count")).toBe(1);
    expect(total(s, "modelmux_open_streams")).toBe(0);
    // Nothing has a price: no cost series.
    expect(samplesOf(s, "modelmux_cost_usd_total")).toEqual([]);
  });
});

describe("rate-limit refusals", () => {
  it("are counted by the scope of the limit that refused", async () => {
    const h = await start("fetch", {}, (c) => {
      c.providers.echo!.rate_limit = { requests: 2, window: "60s" };
      c.rate_limit = { developers: { tester: { requests: 1, window: "60s" } } };
    });
    const send = (key: string) => h.request("/v1/chat/completions", postJson(hello("limited"), { authorization: `Bearer ${key}` }));
    expect((await send(TEST_KEY)).status).toBe(200);
    // The developer's one request a minute is spent.
    expect((await send(TEST_KEY)).status).toBe(429);
    // Another developer: the provider's second request, then its limit is full.
    expect((await send(ADMIN_KEY)).status).toBe(200);
    expect((await send(ADMIN_KEY)).status).toBe(429);
    const s = await scrape(h);
    expect(samplesOf(s, "modelmux_rate_limit_refusals_total").map((x) => `${x.labels.scope} = ${x.value}`)).toEqual(["app = 0", "developer = 1", "provider = 1", "unavailable = 0"]);
    expect(total(s, "modelmux_requests_total", { status: "429", code: "rate_limit_exceeded", provider: "echo" })).toBe(2);
  });
});

describe("the metrics of routers in one process", () => {
  it("are each router's own", async () => {
    const [a, b] = [await start("fetch"), await start("fetch")];
    await a.openai.chat.completions.create(hello("only a"));
    expect(total(await scrape(a), "modelmux_requests_total", { endpoint: "/v1/chat/completions" })).toBe(1);
    expect(total(await scrape(b), "modelmux_requests_total", { endpoint: "/v1/chat/completions" })).toBe(0);
  });

  it("include Node's process metrics, prefixed, when asked for", async () => {
    const h = await start("fetch", { metrics: { processMetrics: true } });
    const s = await scrape(h);
    expect(samplesOf(s, "modelmux_process_cpu_user_seconds_total")).toHaveLength(1);
  });
});

describe("label values from identity-provider tokens", () => {
  it("are capped: a flood of new app and developer claims ends in `other`, the keys' own values stay", async () => {
    const h = await start("http", { metrics: { maxLabelValues: 3 } });
    const FLOOD = 12;
    for (let i = 0; i < FLOOD; i++) {
      const token = await idpKey.sign({ azp: `app-${i}`, sub: `dev-${i}` });
      expect((await h.request("/v1/chat/completions", postJson(hello(`flood ${i}`), { authorization: `Bearer ${token}` }))).status).toBe(200);
    }
    await h.openai.chat.completions.create(hello("a key"));
    const s = await scrape(h);
    expect(labelValues(s, "modelmux_tokens_total", "developer")).toEqual(["dev-0", "dev-1", "dev-2", "other", "tester"]);
    expect(labelValues(s, "modelmux_tokens_total", "app")).toEqual(["app-0", "app-1", "app-2", "other", "test-app"]);
    // Every request still counted: the folded ones under `other`.
    expect(total(s, "modelmux_tokens_total", { developer: "other", kind: "input" })).toBeGreaterThan(0);
    expect(samplesOf(s, "modelmux_tokens_total", { developer: "other", kind: "input" })).toHaveLength(1);
    expect(total(s, "modelmux_requests_total", { endpoint: "/v1/chat/completions", status: "200" })).toBe(FLOOD + 1);
    // The series stay bounded: 5 app/developer pairs, 2 kinds.
    expect(samplesOf(s, "modelmux_tokens_total")).toHaveLength(10);
  });
});
