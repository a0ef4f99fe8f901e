/**
 * The router's middleware (README, "Middleware"): the defaults in their order, and an embedder's
 * list through `createRouter`'s `middleware` option — replaced, reordered, removed, added — the same
 * over a socket (`router.handler`) and through `router.fetch`, with the openai SDK as a client.
 */
import { afterEach, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { bodyLimit, createLogger, exchangeOf, invalidRequest, type Middleware, type RouterOptions } from "@modelmux/core";
import { postJson, startHarness, testConfig, TEST_KEY, TRANSPORTS, type Harness } from "./helpers/harness.ts";

const ECHO = { echo: { plugin: "provider-echo", models: ["echo-1"] } };
const chat = (content: string) => ({ model: "echo/echo-1", messages: [{ role: "user" as const, content }] });

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe.each(TRANSPORTS)("middleware over %s", (transport) => {
  const start = async (options: RouterOptions, extra = {}) => (harness = await startHarness(testConfig(ECHO, extra), transport, options));

  it("hands the defaults over in order, named for their factories", async () => {
    let names: string[] = [];
    await start({ middleware: (defaults) => ((names = defaults.map((m) => m.name)), defaults) }, { rate_limit: { app: { requests: 100, window: "60s" } } });
    expect(names).toEqual(["requestId", "accessLog", "metrics", "usageCounters", "activity", "auth", "bodyLimit", "rateLimit"]);
  });

  it("an end listener that throws keeps neither the reply nor the other listeners from their work", async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: "info", format: "json", write: (text) => lines.push(text) });
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => void warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const throwsAtEnd: Middleware = function throwsAtEnd(event, next) {
        exchangeOf(event).onEnd(() => {
          throw new Error("an embedder's listener failed");
        });
        return next();
      };
      const h = await start({ logger, middleware: (defaults) => [defaults[0]!, throwsAtEnd, ...defaults.slice(1)] });
      expect((await h.openai.chat.completions.create(chat("still answered"))).choices[0]!.message.content).toBe("still answered");
      // The access log, told after the throwing listener, still writes its line.
      await expect.poll(() => (logger.flush(), lines.join("").includes("/v1/chat/completions"))).toBe(true);
      await expect.poll(() => warnings.some((warning) => warning.message === "an embedder's listener failed")).toBe(true);
    } finally {
      process.off("warning", onWarning);
    }
  });

  it("replaces bodyLimit with a smaller one: a body past it is a 413 in the envelope", async () => {
    const h = await start({ middleware: (defaults) => defaults.map((m) => (m.name === "bodyLimit" ? bodyLimit({ limit: 1024 }) : m)) });
    expect((await h.openai.chat.completions.create(chat("small"))).choices[0]!.message.content).toBe("small");
    const refused = await h.request("/v1/chat/completions", postJson(chat("x".repeat(2048))));
    expect(refused.status).toBe(413);
    expect(refused.headers.get("x-request-id")).toBeTruthy();
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("body_too_large");
  });

  it("runs an added middleware after auth with the caller known; what it throws is answered in the envelope", async () => {
    const seen: string[] = [];
    const onlyTestApp: Middleware = function onlyTestApp(event, next) {
      const x = exchangeOf(event);
      seen.push(`${x.principal?.app} ${x.method} ${x.path}`);
      if (x.header("x-forbidden") !== undefined) throw invalidRequest("x-forbidden: this header is refused here; remove it.", { param: "x-forbidden" });
      return next();
    };
    const h = await start({ middleware: (defaults) => [...defaults, onlyTestApp] });
    const stream = await h.openai.chat.completions.create({ ...chat("streamed past it"), stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("streamed past it");
    expect(seen).toEqual(["test-app POST /v1/chat/completions"]);

    const refused = await h.request("/v1/models", { headers: { authorization: `Bearer ${TEST_KEY}`, "x-forbidden": "1" } });
    expect(refused.status).toBe(400);
    expect(refused.headers.get("x-request-id")).toBeTruthy();
    expect(await refused.json()).toMatchObject({ error: { type: "invalid_request_error", param: "x-forbidden" } });
    // Without a key, auth answers first: the added middleware never sees the request.
    expect((await h.request("/v1/models", { headers: { "x-forbidden": "1" } })).status).toBe(401);
    expect(seen).toHaveLength(2);
  });

  it("sends a Response a middleware placed before auth returns, as it is", async () => {
    const ping: Middleware = function ping(event, next) {
      return exchangeOf(event).path === "/v1/ping" ? new Response("pong", { status: 202, headers: { "x-pinged": "yes" } }) : next();
    };
    const h = await start({ middleware: (defaults) => [ping, ...defaults] });
    const reply = await h.request("/v1/ping");
    expect(reply.status).toBe(202);
    expect(reply.headers.get("x-pinged")).toBe("yes");
    expect(await reply.text()).toBe("pong");
    expect((await h.request("/v1/models")).status).toBe(401);
  });

  it("leaves /v1/ open without auth, and sends no x-request-id without requestId", async () => {
    const h = await start({ middleware: (defaults) => defaults.filter((m) => m.name !== "auth" && m.name !== "requestId") });
    const models = await h.request("/v1/models");
    expect(models.status).toBe(200);
    expect(models.headers.get("x-request-id")).toBeNull();
    const open = new OpenAI({ baseURL: h.baseURL, apiKey: "not-checked", maxRetries: 0, fetch: (input, init) => h.request(new URL(String(input)).pathname, init) });
    expect((await open.chat.completions.create(chat("no key needed"))).choices[0]!.message.content).toBe("no key needed");
  });

  it("logs one access line per request once its reply has ended, with the request id", async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: "info", format: "json", write: (text) => lines.push(text) });
    const h = await start({ logger });
    const reply = await h.request("/v1/models", { headers: { authorization: `Bearer ${TEST_KEY}`, "x-request-id": "req-mw-1" } });
    expect(reply.headers.get("x-request-id")).toBe("req-mw-1");
    await reply.arrayBuffer();
    await expect.poll(() => (logger.flush(), lines.join("").includes('"request_id":"req-mw-1"'))).toBe(true);
    const line = JSON.parse(lines.join("").split("\n").find((l) => l.includes("req-mw-1"))!) as Record<string, unknown>;
    expect(line).toMatchObject({ status: 200, app: "test-app", request_id: "req-mw-1" });
  });

  it("logs a stream once, when it has ended, with its usage", async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: "info", format: "json", write: (text) => lines.push(text) });
    const h = await start({ logger });
    const stream = await h.openai.chat.completions.create({ ...chat("counted at the end"), stream: true, stream_options: { include_usage: true } });
    for await (const _chunk of stream);
    const chatLines = () => (logger.flush(), lines.join("").split("\n").filter((l) => l.includes("/v1/chat/completions")));
    await expect.poll(() => chatLines().length).toBe(1);
    const line = JSON.parse(chatLines()[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({ status: 200, model: "echo/echo-1" });
    expect(line.completion_tokens).toBeGreaterThan(0);
  });
});
