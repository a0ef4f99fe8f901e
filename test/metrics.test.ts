/**
 * `GET /metrics` (README, "Metrics") after known traffic through a real router: the echo provider
 * and the chaos upstreams (`helpers/chaos-router.ts`) for failures. Each test sends its requests,
 * scrapes with an admin key and checks the exact counts: requests by endpoint, provider, model,
 * status, error code and outcome; tokens and cost; attempts, retries, fallbacks, continuations and
 * circuits per target; rate-limit refusals; requests in flight and open streams.
 */
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import type { CompletionUsage } from "openai/resources/completions";
import { describe, expect, it } from "vitest";
import type { ModelmuxConfig } from "@modelmux/core";
import { ASK, BACKUP, chat, failure, PRIMARY, routed, streamChat, useChaosRouter } from "./helpers/chaos-router.ts";
import { CHAOS_ERRORS } from "./helpers/chaos-upstream.ts";
import { postJson, TEST_KEY, type Harness } from "./helpers/harness.ts";
import { parseMetrics, samplesOf, total, type Sample } from "./helpers/prometheus-text.ts";
import { until } from "./helpers/wait.ts";

const rig = useChaosRouter();
const ECHO = "echo/echo-1";
const ADMIN_KEY = "sk-metrics-admin-0123456789";
const LIMITED_KEY = "sk-metrics-limited-0123456789";
const PRICES = { [ECHO]: { input: 2, output: 8 }, [PRIMARY]: { input: 1, output: 3 }, [BACKUP]: { input: 5, output: 7 } };

/** The rig's router, with the echo provider, an admin key, a key of an app allowed one request a minute, and prices. */
function metered(config: ModelmuxConfig): void {
  config.auth!.api_keys!.push({ key: ADMIN_KEY, app: "ops", developer: "root", admin: true }, { key: LIMITED_KEY, app: "limited", developer: "lim" });
  config.providers.echo = { plugin: "provider-echo", models: ["echo-1"] };
  config.pricing = PRICES;
  config.rate_limit = { apps: { limited: { requests: 1, window: "60s" } } };
}

/** Scrapes once every other request has ended (the scrape is then the one request in flight). */
async function scrape(h: Harness): Promise<Sample[]> {
  let samples: Sample[] = [];
  await until(async () => {
    const res = await h.request("/metrics", { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    samples = parseMetrics(await res.text());
    return total(samples, "modelmux_in_flight_requests") === 1;
  }, "every request to end");
  return samples;
}

/** Each series of `name` as `label=value … = count`, the labels in `labels`' order, sorted. */
function rows(samples: readonly Sample[], name: string, labels: readonly string[]): string[] {
  return samplesOf(samples, name)
    .map((s) => `${labels.map((label) => s.labels[label]).join(" ")} = ${s.value}`)
    .sort();
}

const REQUEST_LABELS = ["method", "endpoint", "provider", "model", "status", "code", "outcome", "stream"];
const CHAT = "POST /v1/chat/completions";

function cost(model: keyof typeof PRICES, usage: CompletionUsage): number {
  return (usage.prompt_tokens * PRICES[model].input + usage.completion_tokens * PRICES[model].output) / 1e6;
}

describe("GET /metrics after known traffic", () => {
  it("counts requests, tokens, cost, attempts and refusals exactly", async () => {
    const h = await rig.start(metered);
    const json = await h.openai.chat.completions.create({ model: ECHO, messages: ASK });
    let streamUsage: CompletionUsage | undefined;
    const stream = await h.openai.chat.completions.create({ model: ECHO, messages: ASK, stream: true, stream_options: { include_usage: true } });
    for await (const chunk of stream as AsyncIterable<ChatCompletionChunk>) streamUsage = chunk.usage ?? streamUsage;
    expect((await failure(h.openai.chat.completions.create({ model: "nobody/nothing", messages: ASK }))).status).toBe(404);
    // A 500, then the same target again.
    rig.primary.script(CHAOS_ERRORS.serverError);
    const retried = await chat(h);
    expect(routed(retried.headers)).toEqual({ model: PRIMARY, attempts: "2" });
    // Context length: the next target at once.
    rig.primary.script(CHAOS_ERRORS.contextLengthExceeded);
    const fellBack = await chat(h);
    expect(routed(fellBack.headers)).toEqual({ model: BACKUP, attempts: "2" });
    // A stream that ends with its error event after its 200: nobody can continue it.
    rig.primary.script({ errorAfter: 3 });
    const broken = await streamChat(h);
    expect(broken.status).toBe(200);
    const brokenCode = broken.errors[0]!.code;
    expect(brokenCode).toEqual(expect.any(String));
    // The limited app's second request: our own 429.
    const limited = (body: unknown) => h.request("/v1/chat/completions", postJson(body, { authorization: `Bearer ${LIMITED_KEY}` }));
    const admitted = await limited({ model: ECHO, messages: ASK });
    expect(admitted.status).toBe(200);
    const limitedUsage = ((await admitted.json()) as { usage: CompletionUsage }).usage;
    expect((await limited({ model: ECHO, messages: ASK })).status).toBe(429);
    expect((await h.request("/metrics")).status).toBe(401);
    expect((await h.request("/metrics", { headers: { authorization: `Bearer ${TEST_KEY}` } })).status).toBe(403);

    const s = await scrape(h);
    // Scrapes made while `scrape` waited for the others to end are requests too.
    const scrapes = total(s, "modelmux_requests_total", { endpoint: "/metrics", status: "200" });
    expect(rows(s, "modelmux_requests_total", REQUEST_LABELS)).toEqual(
      [
        `${CHAT} echo echo-1 200 none ok false = 2`,
        `${CHAT} echo echo-1 200 none ok true = 1`,
        `${CHAT} echo echo-1 429 rate_limit_exceeded error false = 1`,
        `${CHAT} none none 404 model_not_found error false = 1`,
        `${CHAT} primary gpt-4o 200 none ok false = 1`,
        `${CHAT} primary gpt-4o 200 ${brokenCode} stream_failed true = 1`,
        `${CHAT} backup gpt-4o 200 none ok false = 1`,
        `GET /metrics none none 401 invalid_api_key error false = 1`,
        `GET /metrics none none 403 admin_required error false = 1`,
        ...(scrapes > 0 ? [`GET /metrics none none 200 none ok false = ${scrapes}`] : []),
      ].sort(),
    );

    // Tokens and cost by app, developer and the target that answered.
    const tokens = (app: string, developer: string, target: string, kind: string) => {
      const [provider, model] = target.split("/");
      return total(s, "modelmux_tokens_total", { app, developer, provider: provider!, model: model!, kind });
    };
    expect(tokens("test-app", "tester", ECHO, "input")).toBe(json.usage!.prompt_tokens + streamUsage!.prompt_tokens);
    expect(tokens("test-app", "tester", ECHO, "output")).toBe(json.usage!.completion_tokens + streamUsage!.completion_tokens);
    expect(tokens("limited", "lim", ECHO, "input")).toBe(limitedUsage.prompt_tokens);
    expect(tokens("test-app", "tester", PRIMARY, "input")).toBe(retried.completion.usage!.prompt_tokens);
    expect(tokens("test-app", "tester", PRIMARY, "output")).toBe(retried.completion.usage!.completion_tokens);
    expect(tokens("test-app", "tester", BACKUP, "output")).toBe(fellBack.completion.usage!.completion_tokens);
    const spent = (app: string, provider: string) => total(s, "modelmux_cost_usd_total", { app, provider });
    expect(spent("test-app", "echo")).toBeCloseTo(cost(ECHO, json.usage!) + cost(ECHO, streamUsage!), 12);
    expect(spent("limited", "echo")).toBeCloseTo(cost(ECHO, limitedUsage), 12);
    expect(spent("test-app", "primary")).toBeCloseTo(cost(PRIMARY, retried.completion.usage!), 12);
    expect(spent("test-app", "backup")).toBeCloseTo(cost(BACKUP, fellBack.completion.usage!), 12);

    // The routing, per target.
    expect(rows(s, "modelmux_upstream_attempts_total", ["provider", "model", "outcome"])).toEqual(
      [
        "echo echo-1 ok = 3",
        // The 429 of our own limit: refused before any call, given to the client as it is.
        "echo echo-1 final = 1",
        "primary gpt-4o retryable = 1",
        // The retried request's answer, and the stream's (its content came; it broke later).
        "primary gpt-4o ok = 2",
        "primary gpt-4o next = 1",
        "backup gpt-4o ok = 1",
      ].sort(),
    );
    expect(rows(s, "modelmux_retries_total", ["provider", "model"])).toEqual(["backup gpt-4o = 0", "echo echo-1 = 0", "primary gpt-4o = 1"]);
    expect(rows(s, "modelmux_fallbacks_total", ["provider", "model"])).toEqual(["backup gpt-4o = 1", "echo echo-1 = 0", "primary gpt-4o = 0"]);
    expect(total(s, "modelmux_continuations_total")).toBe(0);
    expect(rows(s, "modelmux_rate_limit_refusals_total", ["scope"])).toEqual(["app = 1", "developer = 0", "provider = 0", "unavailable = 0"]);
    expect(rows(s, "modelmux_circuit_state", ["provider", "model"])).toEqual(["backup gpt-4o = 0", "claude claude-chaos-1 = 0", "echo echo-1 = 0", "primary gpt-4o = 0"]);

    // The histograms: one observation per request, per answered attempt, per stream begun.
    expect(total(s, "modelmux_request_duration_seconds_count")).toBe(10 + scrapes);
    expect(total(s, "modelmux_request_duration_seconds_count", { endpoint: "/v1/chat/completions", outcome: "stream_failed", provider: "primary" })).toBe(1);
    expect(rows(s, "modelmux_upstream_duration_seconds_count", ["provider", "model"])).toEqual(["backup gpt-4o = 1", "echo echo-1 = 3", "primary gpt-4o = 2"]);
    expect(rows(s, "modelmux_time_to_first_token_seconds_count", ["provider", "model"])).toEqual(["echo echo-1 = 1", "primary gpt-4o = 1"]);
    const inf = samplesOf(s, "modelmux_request_duration_seconds_bucket", { le: "+Inf" });
    expect(inf.reduce((sum, sample) => sum + sample.value, 0)).toBe(10 + scrapes);
    expect(total(s, "modelmux_open_streams")).toBe(0);
  });

  it("counts a continuation, the retries and fallbacks around it, and an open circuit", async () => {
    const h = await rig.start((config) => {
      metered(config);
      config.providers.backup!.capabilities = { prefill: true };
    });
    // Broken after 3 tokens; the backup continues it.
    rig.primary.script({ cutAfter: 3 });
    const continued = await streamChat(h);
    expect(continued).toMatchObject({ status: 200, text: "t0 t1 t2 t3 t4 t5 t6 t7", errors: [], done: true });
    // The primary fails every try: two requests open its circuit (5 failures), the backup answers both.
    rig.primary.setDefault(CHAOS_ERRORS.serverError);
    for (let i = 0; i < 2; i++) expect(routed((await chat(h)).headers).model).toBe(BACKUP);

    const s = await scrape(h);
    expect(rows(s, "modelmux_continuations_total", ["provider", "model"])).toEqual(["backup gpt-4o = 0", "primary gpt-4o = 1"]);
    expect(rows(s, "modelmux_circuit_state", ["provider", "model"])).toEqual(["backup gpt-4o = 0", "claude claude-chaos-1 = 0", "echo echo-1 = 0", "primary gpt-4o = 2"]);
    // 3 tries then 2 (the circuit opened on the fifth failure).
    expect(rows(s, "modelmux_upstream_attempts_total", ["provider", "model", "outcome"])).toEqual(
      ["backup gpt-4o ok = 3", "primary gpt-4o next = 1", "primary gpt-4o retryable = 5"].sort(),
    );
    expect(rows(s, "modelmux_retries_total", ["provider", "model"])).toEqual(["backup gpt-4o = 0", "primary gpt-4o = 3"]);
    expect(rows(s, "modelmux_fallbacks_total", ["provider", "model"])).toEqual(["backup gpt-4o = 3", "primary gpt-4o = 0"]);
    expect(total(s, "modelmux_requests_total", { provider: "backup", status: "200", outcome: "ok" })).toBe(2);
    // The continued stream reads as the primary's: what answered first.
    expect(total(s, "modelmux_requests_total", { provider: "primary", status: "200", outcome: "ok", stream: "true" })).toBe(1);
  });

  it("shows an open stream and the requests in flight until the client leaves", async () => {
    const h = await rig.start((config) => {
      metered(config);
      config.routing!.timeouts = { first_token: "5s", idle: "30s" };
    });
    rig.primary.script({ stallAfter: 2 });
    const leave = new AbortController();
    const res = await h.request("/v1/chat/completions", { ...postJson({ model: PRIMARY, messages: ASK, stream: true }), signal: leave.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read();
    const read = async () => parseMetrics(await (await h.request("/metrics", { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).text());
    const during = await read();
    expect(total(during, "modelmux_open_streams")).toBe(1);
    expect(total(during, "modelmux_in_flight_requests")).toBe(2);
    leave.abort();
    const after = await scrape(h);
    expect(total(after, "modelmux_open_streams")).toBe(0);
    // Counted once it ended, as the access log has it.
    expect(total(after, "modelmux_requests_total", { provider: "primary", stream: "true" })).toBe(1);
    expect(total(after, "modelmux_time_to_first_token_seconds_count", { provider: "primary" })).toBe(1);
  });
});
