/**
 * End-to-end: the error table (docs/interface.md, "Errors") over both transports — the envelope,
 * request ids, the statuses the router answers itself (400, 404, 405, 413, 415) and those it maps
 * from a provider (500, 502, 504, a provider's 4xx and 429), before and during a stream.
 */
import { request as httpRequest } from "node:http";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { providerError, upstreamError, type ChatCompletionChunk } from "@modelmux/core";
import { upstreamTimeout } from "../core/src/errors.ts";
import { postJson, readSse, startHarness, testConfig, TEST_KEY, TRANSPORTS, type Harness } from "./helpers/harness.ts";
import { createProbe } from "./helpers/probe-provider.ts";

type Envelope = { message: string; type: string; code: string | null; param: string | null };

const { plugin: probePlugin, state: probe, reset: resetProbe } = createProbe();

// One call per request: this suite checks how each failure maps; the router's retries have their own suite.
const config = testConfig({ acme: { plugin: "probe", models: ["m1"] } }, { server: { body_limit: "1kb" }, aliases: { fast: "acme/m1" }, routing: { retry: { attempts: 0 } } });
const CHAT = "/v1/chat/completions";
const hello = { model: "acme/m1", messages: [{ role: "user", content: "hi" }] };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SECRET = "hunter2-internal-detail";

/** Asserts a reply is exactly the error envelope, with a request id, and returns the error. */
async function expectError(res: Response, status: number, want: Partial<Envelope>): Promise<Envelope> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(res.headers.get("x-request-id")).toMatch(/\S/);
  const body = JSON.parse(text) as { error: Envelope };
  expect(Object.keys(body)).toEqual(["error"]);
  expect(Object.keys(body.error).sort()).toEqual(["code", "message", "param", "type"]);
  expect(body.error.message).toEqual(expect.any(String));
  expect(body.error.type).toEqual(expect.any(String));
  for (const key of ["code", "param"] as const) expect([null, "string"]).toContain(body.error[key] === null ? null : typeof body.error[key]);
  expect(body.error).toMatchObject(want);
  return body.error;
}

/** The error a promise rejects with, checked to be of the given SDK class. */
async function sdkError<E>(promise: Promise<unknown>, type: abstract new (...args: never[]) => E): Promise<E> {
  const error = await promise.then(() => new Error("expected the SDK call to fail"), (e: unknown) => e);
  expect(error).toBeInstanceOf(type);
  return error as E;
}

const post = (body: BodyInit, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST", headers: { authorization: `Bearer ${TEST_KEY}`, ...headers }, body,
});

/** A POST over node:http that resolves with the reply as soon as it comes, however much of the body went out. */
function rawPost(url: string, headers: Record<string, string>, feed: (write: (data: string) => boolean) => void): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: "POST", headers: { authorization: `Bearer ${TEST_KEY}`, ...headers } }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (part: string) => (body += part));
      res.on("end", () => {
        req.destroy();
        const replyHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) if (typeof value === "string") replyHeaders.set(name, value);
        resolve(new Response(body, { status: res.statusCode, headers: replyHeaders }));
      });
    });
    req.on("error", reject);
    // A server that waits for the rest of the body would hang the test: fail fast and say why.
    const timer = setTimeout(() => {
      reject(new Error("no reply within 5s: the server is waiting for the body"));
      req.destroy();
    }, 5000);
    req.on("close", () => clearTimeout(timer));
    req.flushHeaders();
    feed((data) => !req.destroyed && (req.write(data), true));
  });
}

for (const transport of TRANSPORTS) {
  describe(transport, () => {
    let h: Harness;
    beforeAll(async () => (h = await startHarness(config, transport, { plugins: { probe: probePlugin } })));
    afterAll(() => h.close());
    beforeEach(resetProbe);

    describe("x-request-id", () => {
      test("is on every reply: JSON, SSE, error, health check, models", async () => {
        const replies = [
          await h.request(CHAT, postJson(hello)),
          await h.request(CHAT, postJson({ ...hello, stream: true })),
          await h.request(CHAT, postJson({ ...hello, temperature: 9 })),
          await h.request("/healthz"),
          await h.request("/v1/models", { headers: { authorization: `Bearer ${TEST_KEY}` } }),
        ];
        expect(replies.map((r) => r.status)).toEqual([200, 200, 400, 200, 200]);
        expect(replies[1]!.headers.get("content-type")).toMatch(/^text\/event-stream/);
        const ids = replies.map((r) => r.headers.get("x-request-id"));
        for (const id of ids) expect(id).toMatch(UUID);
        expect(new Set(ids).size).toBe(ids.length);
        await Promise.all(replies.map((r) => r.text()));
      });

      test("echoes a client's plain id on success, stream and error", async () => {
        const id = `client-Req_1.2:3-${"x".repeat(100)}`;
        for (const body of [hello, { ...hello, stream: true }, { ...hello, model: "acme/nope" }]) {
          const res = await h.request(CHAT, postJson(body, { "x-request-id": id }));
          expect(res.headers.get("x-request-id")).toBe(id);
          await res.text();
        }
        const maxLength = "a".repeat(128);
        expect((await h.request("/healthz", { headers: { "x-request-id": maxLength } })).headers.get("x-request-id")).toBe(maxLength);
      });

      test.each([["spaces", "two words"], ["129 characters", "a".repeat(129)], ["a log-forging line", "id\tlevel=error"], ["a quote", 'a"b']])(
        "replaces an id with %s",
        async (_name, unsafe) => {
          const res = await h.request(CHAT, postJson(hello, { "x-request-id": unsafe }));
          expect(res.status).toBe(200);
          expect(res.headers.get("x-request-id")).toMatch(UUID);
          await res.text();
        },
      );

      test("reaches the SDK on success and on error", async () => {
        const done = await h.openai.chat.completions.create({ model: "acme/m1", messages: [{ role: "user", content: "hi" }] });
        expect(done._request_id).toMatch(UUID);
        const error = await sdkError(h.openai.chat.completions.create({ model: "acme/nope", messages: [{ role: "user", content: "hi" }] }), OpenAI.NotFoundError);
        expect(error.requestID).toMatch(UUID);
      });
    });

    describe("400 invalid_request_error", () => {
      const longKey = "k".repeat(65);
      test.each([
        ["temperature", { temperature: 3 }, "invalid_value"],
        ["messages[0].role", { messages: [{ role: "robot", content: "hi" }] }, "invalid_value"],
        ["stop", { stop: ["a", "b", "c", "d", "e"] }, "invalid_value"],
        ["logit_bias.50256", { logit_bias: { "50256": 101 } }, "invalid_value"],
        [`metadata.${longKey}`, { metadata: { [longKey]: "v" } }, "invalid_value"],
        ["metadata.note", { metadata: { note: "x".repeat(513) } }, "invalid_value"],
        ["messages", { messages: undefined }, "missing_field"],
        ["frobnicate", { frobnicate: true }, "unknown_field"],
      ])("names %s", async (param, patch, code) => {
        const error = await expectError(await h.request(CHAT, postJson({ ...hello, ...patch })), 400, { type: "invalid_request_error", param, code });
        expect(error.message).toContain(param);
      });

      test.each([
        ["invalid JSON", '{"model": "acme/m1",', "invalid_json"],
        ["an empty body", "", undefined],
        ["a JSON array", JSON.stringify([hello]), undefined],
        ["JSON null", "null", undefined],
      ])("rejects %s", async (_name, body, code) => {
        const error = await expectError(await h.request(CHAT, postJson(body)), 400, { type: "invalid_request_error", param: null });
        if (code) expect(error.code).toBe(code);
      });

      test("reaches the SDK as BadRequestError with the param", async () => {
        const error = await sdkError(
          h.openai.chat.completions.create({ model: "acme/m1", messages: [{ role: "user", content: "hi" }], temperature: 3 }),
          OpenAI.BadRequestError,
        );
        expect(error).toMatchObject({ status: 400, type: "invalid_request_error", code: "invalid_value", param: "temperature" });
        expect(error.error).toMatchObject({ param: "temperature", message: expect.stringContaining("temperature") });
      });
    });

    describe("404, 405", () => {
      test.each([["nope/m1"], ["gpt-unknown"], ["acme/unknown"], ["acme"], ["/m1"]])("model_not_found for %s", async (model) => {
        const error = await expectError(await h.request(CHAT, postJson({ ...hello, model })), 404, {
          type: "invalid_request_error", code: "model_not_found", param: "model",
        });
        expect(error.message).toContain(`'${model}'`);
      });

      test("an alias works; the SDK gets NotFoundError for an unknown model", async () => {
        expect((await h.request(CHAT, postJson({ ...hello, model: "fast" }))).status).toBe(200);
        const error = await sdkError(h.openai.chat.completions.create({ model: "acme/unknown", messages: [{ role: "user", content: "hi" }] }), OpenAI.NotFoundError);
        expect(error).toMatchObject({ status: 404, code: "model_not_found", param: "model" });
      });

      test.each([["/v1/nope"], ["/nope"], ["/v1/chat/completion"]])("not_found for the route %s", async (path) => {
        await expectError(await h.request(path, { headers: { authorization: `Bearer ${TEST_KEY}` } }), 404, { type: "invalid_request_error", code: "not_found" });
      });

      test.each([["PUT", CHAT, "POST"], ["DELETE", CHAT, "POST"], ["POST", "/v1/models", "GET"], ["DELETE", "/v1/models", "GET"]])(
        "method_not_allowed for %s %s, with allow",
        async (method, path, allowed) => {
          const res = await h.request(path, { method, headers: { authorization: `Bearer ${TEST_KEY}` } });
          const allow = (res.headers.get("allow") ?? "").split(/,\s*/);
          expect(allow).toContain(allowed);
          expect(allow).not.toContain(method);
          await expectError(res, 405, { type: "invalid_request_error", code: "method_not_allowed", param: null });
        },
      );
    });

    describe("413 body_too_large (body_limit 1kb)", () => {
      const big = JSON.stringify({ ...hello, messages: [{ role: "user", content: "x".repeat(2000) }] });
      const expect413 = async (res: Response) => {
        await expectError(res, 413, { type: "invalid_request_error", code: "body_too_large", param: null });
        expect(probe.calls.length).toBe(0);
      };

      test("a body under the limit passes; one over it is refused, also through the SDK", async () => {
        const fits = JSON.stringify({ ...hello, messages: [{ role: "user", content: "x".repeat(900) }] });
        expect((await h.request(CHAT, postJson(fits))).status).toBe(200);
        probe.calls.length = 0;
        await expect413(await h.request(CHAT, postJson(big)));
        const error = await sdkError(h.openai.chat.completions.create(JSON.parse(big)), OpenAI.APIError);
        expect(error).toMatchObject({ status: 413, code: "body_too_large" });
      });

      test("a declared content-length over the limit is refused before the body is read", async () => {
        if (transport === "fetch") return expect413(await h.request(CHAT, postJson("{}", { "content-length": "5000" })));
        // Nothing of the body is sent: the reply must come from the header alone.
        await expect413(await rawPost(`${h.baseURL}/chat/completions`, { "content-type": "application/json", "content-length": "5000" }, () => {}));
      });

      test("a chunked body that grows past the limit is refused, not waited for", async () => {
        const piece = "x".repeat(256);
        if (transport === "fetch") {
          const endless = new ReadableStream<Uint8Array>({ pull: (c) => c.enqueue(new TextEncoder().encode(piece)) });
          return expect413(await h.request(CHAT, { ...post(endless, { "content-type": "application/json" }), duplex: "half" } as RequestInit));
        }
        let timer: NodeJS.Timeout | undefined;
        const reply = rawPost(`${h.baseURL}/chat/completions`, { "content-type": "application/json" }, (write) => {
          timer = setInterval(() => write(piece) || clearInterval(timer), 10);
        });
        try {
          await expect413(await reply);
        } finally {
          clearInterval(timer);
        }
      });
    });

    describe("415 unsupported_media_type", () => {
      test.each([
        ["no content-type", {}],
        ["text/plain", { "content-type": "text/plain" }],
        ["form data", { "content-type": "application/x-www-form-urlencoded" }],
      ])("%s is refused", async (_name, headers) => {
        const body = new TextEncoder().encode(JSON.stringify(hello));
        await expectError(await h.request(CHAT, post(body, headers)), 415, { type: "invalid_request_error", code: "unsupported_media_type", param: null });
      });

      test("application/json with a charset is accepted", async () => {
        expect((await h.request(CHAT, postJson(hello, { "content-type": "application/json; charset=utf-8" }))).status).toBe(200);
      });
    });

    describe("a refused request never reaches the provider", () => {
      test.each([
        ["401", 401, { ...postJson(hello), headers: { "content-type": "application/json" } }],
        ["400 schema", 400, postJson({ ...hello, temperature: -1 })],
        ["400 JSON", 400, postJson("{")],
        ["404 model", 404, postJson({ ...hello, model: "acme/m2" })],
        ["413", 413, postJson({ ...hello, messages: [{ role: "user", content: "x".repeat(2000) }] })],
        ["415", 415, post(JSON.stringify(hello), { "content-type": "text/plain" })],
      ] as Array<[string, number, RequestInit]>)("%s", async (_name, status, init) => {
        const res = await h.request(CHAT, init);
        expect(res.status).toBe(status);
        await res.text();
        expect(probe.calls.length).toBe(0);
      });
    });

    describe("provider failures", () => {
      test.each([
        ["upstreamError", upstreamError("acme: connection reset"), 502, "upstream_error", "connection reset"],
        ["a provider 500", providerError("acme", { status: 500, message: "server fault" }), 502, "upstream_error", "server fault"],
        ["a provider 503", providerError("acme", { status: 503, message: "unavailable" }), 502, "upstream_error", "unavailable"],
        ["a provider 529", providerError("acme", { status: 529, message: "Overloaded" }), 502, "upstream_error", "Overloaded"],
        ["a timeout", upstreamTimeout("acme", 5000), 504, "upstream_timeout", "acme"],
      ])("%s is an api_error with its status", async (_name, error, status, code, text) => {
        probe.error = error;
        const body = await expectError(await h.request(CHAT, postJson(hello)), status, { type: "api_error", code, param: null });
        expect(body.message).toContain(text);
        const sdk = await sdkError(h.openai.chat.completions.create({ model: "acme/m1", messages: [{ role: "user", content: "hi" }] }), OpenAI.InternalServerError);
        expect(sdk).toMatchObject({ status, code, type: "api_error" });
        expect(probe.calls.length).toBe(2);
      });

      test("a plain Error is a 500 that says it is a bug and leaks nothing", async () => {
        probe.error = new Error(`${SECRET} in db.query`);
        const res = await h.request(CHAT, postJson(hello));
        const raw = await res.clone().text();
        const body = await expectError(res, 500, { type: "api_error", code: "internal_error", param: null });
        expect(body.message).toMatch(/bug/i);
        expect(raw).not.toContain(SECRET);
        expect(raw).not.toMatch(/\bat .*\.ts:\d+|Error:/);
        const sdk = await sdkError(h.openai.chat.completions.create({ model: "acme/m1", messages: [{ role: "user", content: "hi" }] }), OpenAI.InternalServerError);
        expect(sdk.status).toBe(500);
        expect(sdk.message).not.toContain(SECRET);
      });

      test("a provider 4xx keeps its status and message", async () => {
        probe.error = providerError("acme", { status: 400, message: "Invalid schema for function 'f'", code: "invalid_function_parameters", param: "tools[0].function.parameters" });
        const body = await expectError(await h.request(CHAT, postJson(hello)), 400, {
          type: "invalid_request_error", code: "invalid_function_parameters", param: "tools[0].function.parameters",
        });
        expect(body.message).toContain("Invalid schema for function 'f'");
        const sdk = await sdkError(h.openai.chat.completions.create({ model: "acme/m1", messages: [{ role: "user", content: "hi" }] }), OpenAI.BadRequestError);
        expect(sdk.message).toContain("Invalid schema for function 'f'");
      });

      test("a provider 429 keeps retry-after and is a RateLimitError", async () => {
        probe.error = providerError("acme", { status: 429, message: "Slow down", retryAfter: "7" });
        const res = await h.request(CHAT, postJson(hello));
        expect(res.headers.get("retry-after")).toBe("7");
        const body = await expectError(res, 429, { type: "rate_limit_error", param: null });
        expect(body.message).toContain("Slow down");
        const sdk = await sdkError(h.openai.chat.completions.create({ model: "acme/m1", messages: [{ role: "user", content: "hi" }] }), OpenAI.RateLimitError);
        expect(sdk).toMatchObject({ status: 429, type: "rate_limit_error" });
        expect(sdk.headers?.get("retry-after")).toBe("7");
      });
    });

    describe("streams", () => {
      const streamed = { ...hello, stream: true };
      const sdkStream = () => h.openai.chat.completions.create({ model: "acme/m1", messages: [{ role: "user", content: "hi" }], stream: true });

      test.each([
        ["its first chunk fails", false],
        ["it cannot start", true],
      ])("a stream whose %s gets a JSON error reply, not SSE", async (_name, rejectStream) => {
        Object.assign(probe, { rejectStream, error: providerError("acme", { status: 429, message: "Slow down", retryAfter: "3" }) });
        const res = await h.request(CHAT, postJson(streamed));
        expect(res.headers.get("retry-after")).toBe("3");
        await expectError(res, 429, { type: "rate_limit_error" });
        probe.error = upstreamError("acme: refused");
        await expectError(await h.request(CHAT, postJson(streamed)), 502, { code: "upstream_error" });
        probe.error = new Error(SECRET);
        const raw = await (await h.request(CHAT, postJson(streamed))).text();
        expect(JSON.parse(raw)).toMatchObject({ error: { code: "internal_error" } });
        expect(raw).not.toContain(SECRET);
        await sdkError(sdkStream(), OpenAI.InternalServerError);
      });

      test.each([
        ["a provider 503", providerError("acme", { status: 503, message: "unavailable" }), { type: "api_error", code: "upstream_error" }, "unavailable"],
        ["a bug", new Error(SECRET), { type: "api_error", code: "internal_error" }, "bug"],
      ])("%s after two chunks ends the stream with one error event and no [DONE]", async (_name, error, want, text) => {
        Object.assign(probe, { error, chunksBeforeError: 2 });
        const res = await h.request(CHAT, postJson(streamed));
        expect(res.status).toBe(200);
        expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
        expect(res.headers.get("x-request-id")).toMatch(UUID);
        const events = await readSse(res);
        expect(events).toHaveLength(3);
        expect(events.slice(0, 2).map((e) => (JSON.parse(e) as ChatCompletionChunk).choices[0]?.delta.content)).toEqual(["part0 ", "part1 "]);
        const last = JSON.parse(events[2]!) as { error: Envelope };
        expect(Object.keys(last)).toEqual(["error"]);
        expect(last.error).toEqual({ message: expect.stringContaining(text), param: null, ...want });
        expect(events[2]).not.toContain(SECRET);

        const parts: string[] = [];
        const stream = await sdkStream();
        const failure = await sdkError((async () => { for await (const c of stream) parts.push(c.choices[0]?.delta.content ?? ""); })(), OpenAI.APIError);
        expect(parts).toEqual(["part0 ", "part1 "]);
        expect(failure).toMatchObject({ status: undefined, ...want });
        expect(failure.message).toContain(text);
      });

      test("a healthy stream ends with [DONE]", async () => {
        expect((await readSse(await h.request(CHAT, postJson(streamed)))).at(-1)).toBe("[DONE]");
      });
    });
  });
}
