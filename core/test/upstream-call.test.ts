/**
 * The shared upstream transport: against a fake `HttpClient` for what is passed and thrown, then
 * through the real client and a `node:http` server for a body that stalls or breaks off.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ModelmuxError, providerError } from "../src/errors.ts";
import { createHttpClient, type HttpBody, type HttpClient, type HttpRequest, type HttpResponse } from "../src/upstream/client.ts";
import { RequestAbort } from "../src/server/request-abort.ts";
import { CallAbort } from "../src/upstream/call-abort.ts";
import type { Exchange } from "../src/server/exchange.ts";
import { createLogger } from "../src/logger.ts";
import type { PluginContext, ProviderCall } from "../src/plugin.ts";
import { ABORT_HOOK, providerCall } from "../src/upstream/provider-call.ts";
import { parseUpstreamJson, postUpstream, readUpstreamText, type UpstreamErrorReply } from "../src/upstream/send.ts";

const SECRET = "sk-test-secret-0123456789";

/** A reply whose `text()` gives `text`, or rejects with `failure`. */
function reply(status: number, text: string, failure?: unknown): HttpResponse {
  const body = Object.assign(Readable.from([text]), {
    text: () => (failure === undefined ? Promise.resolve(text) : Promise.reject(failure)),
    json: () => Promise.resolve(JSON.parse(text) as unknown),
  }) as HttpBody;
  return { status, headers: { "retry-after": "7" }, body };
}

/** A fake client that records each request and answers with `res`. */
function fakeClient(res: HttpResponse): HttpClient & { requests: HttpRequest[] } {
  const requests: HttpRequest[] = [];
  return { requests, request: (req) => (requests.push(req), Promise.resolve(res)), close: () => Promise.resolve() };
}

function context(http: HttpClient) {
  const lines: string[] = [];
  const logger = createLogger({ level: "debug", write: (text) => lines.push(text) });
  const ctx: PluginContext = { name: "acme", logger, http };
  return { ctx, log: () => (logger.flush(), lines.join("")) };
}

const call = (overrides: Partial<ProviderCall> = {}): ProviderCall => ({
  model: "acme-1",
  signal: new AbortController().signal,
  timeoutMs: 5_000,
  requestId: "req_1",
  ...overrides,
});

/** Maps like a plugin's `toProviderError`: the secret never reaches the message. */
const toError = (reply: UpstreamErrorReply): ModelmuxError =>
  providerError("acme", { status: reply.status, message: reply.text.split(SECRET).join("[redacted]"), retryAfter: reply.headers["retry-after"] as string });

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail("expected a rejection"),
    (error: unknown) => error,
  );
}

describe("postUpstream", () => {
  it("POSTs the JSON body with the call's signal, timeout and the provider's name", async () => {
    const http = fakeClient(reply(200, "{}"));
    const { ctx } = context(http);
    const c = call({ timeoutMs: 1234 });
    await postUpstream(ctx, c, { url: "http://upstream.test/v1/x", headers: { "content-type": "application/json" }, body: { a: [1, "b"] }, toError });
    expect(http.requests).toEqual([
      { url: "http://upstream.test/v1/x", method: "POST", headers: { "content-type": "application/json" }, body: '{"a":[1,"b"]}', signal: c.signal, timeoutMs: 1234, idleTimeoutMs: 0, connectTimeoutMs: 0, provider: "acme" },
    ]);
  });

  it("passes the core's call's abort hook instead of its signal, which it never reads", async () => {
    const http = fakeClient(reply(200, "{}"));
    const { ctx } = context(http);
    const x = { abort: new RequestAbort(), requestId: "req_1" } as unknown as Exchange;
    const core = providerCall(x, "acme-1", 5_000);
    const made = vi.spyOn(CallAbort.prototype, "signal", "get");
    await postUpstream(ctx, core, { url: "http://upstream.test/v1/x", headers: {}, body: {}, toError });
    expect(http.requests[0]).toMatchObject({ abort: core[ABORT_HOOK], timeoutMs: 5_000, provider: "acme" });
    expect(http.requests[0]!.signal).toBeUndefined();
    // A plugin's copy of the call (another model, say) keeps the hook.
    const asPluginSeesIt: ProviderCall = core;
    await postUpstream(ctx, { ...asPluginSeesIt, model: "acme-2" }, { url: "http://upstream.test/v1/x", headers: {}, body: {}, toError });
    expect(http.requests[1]).toMatchObject({ abort: core[ABORT_HOOK] });
    expect(http.requests[1]!.signal).toBeUndefined();
    expect(made).not.toHaveBeenCalled();
    made.mockRestore();
  });

  it("passes the signal of a copy that has its own, not the hook it copied", async () => {
    const http = fakeClient(reply(200, "{}"));
    const { ctx } = context(http);
    const core = providerCall({ abort: new RequestAbort(), requestId: "req_1" } as unknown as Exchange, "acme-1", 5_000);
    // A plugin's signal that also fires when a sibling call fails (provider-gemini's parallel images).
    const signal = AbortSignal.any([core.signal, new AbortController().signal]);
    await postUpstream(ctx, { ...core, signal }, { url: "http://upstream.test/v1/x", headers: {}, body: {}, toError });
    expect(http.requests[0]!.signal).toBe(signal);
    expect(http.requests[0]!.abort).toBeUndefined();
  });

  it("returns a reply below 300 as is, its body unread", async () => {
    const res = reply(201, '{"ok":true}');
    const { ctx } = context(fakeClient(res));
    expect(await postUpstream(ctx, call(), { url: "http://upstream.test", headers: {}, body: {}, toError })).toBe(res);
    expect(await res.body.text()).toBe('{"ok":true}');
  });

  it("throws what toError makes of an error reply, and logs its status and message at debug", async () => {
    const seen: UpstreamErrorReply[] = [];
    const { ctx, log } = context(fakeClient(reply(429, `slow down, ${SECRET}`)));
    const error = await rejection(postUpstream(ctx, call(), { url: "http://upstream.test", headers: {}, body: {}, toError: (r) => (seen.push(r), toError(r)) }));
    expect(seen).toEqual([{ status: 429, text: `slow down, ${SECRET}`, headers: { "retry-after": "7" } }]);
    expect(error).toMatchObject({ status: 429, code: "rate_limit_exceeded", message: "acme: slow down, [redacted]", headers: { "retry-after": "7" } });
    expect(log()).toContain("upstream replied 429 to req_1: acme: slow down, [redacted]");
    expect(log()).not.toContain(SECRET);
  });

  it("maps an error reply whose body cannot be read with an empty text", async () => {
    const seen: UpstreamErrorReply[] = [];
    const { ctx } = context(fakeClient(reply(503, "", new Error("premature close"))));
    const error = await rejection(postUpstream(ctx, call(), { url: "http://upstream.test", headers: {}, body: {}, toError: (r) => (seen.push(r), toError(r)) }));
    expect(seen[0]).toMatchObject({ status: 503, text: "" });
    expect(error).toMatchObject({ status: 502, code: "upstream_error" });
  });
});

describe("readUpstreamText", () => {
  it("reads the whole body", async () => {
    const { ctx } = context(fakeClient(reply(200, "")));
    expect(await readUpstreamText(ctx, call(), reply(200, "hello"))).toBe("hello");
  });

  it("classifies a body that fails: a stall is 504, a break 502, our client's abort passes through", async () => {
    const { ctx } = context(fakeClient(reply(200, "")));
    const read = (failure: unknown) => rejection(readUpstreamText(ctx, call({ timeoutMs: 3000 }), reply(200, "", failure)));
    expect(await read(Object.assign(new Error("t"), { code: "UND_ERR_BODY_TIMEOUT" }))).toMatchObject({ status: 504, code: "upstream_timeout" });
    expect(await read(Object.assign(new Error("closed"), { code: "UND_ERR_SOCKET" }))).toMatchObject({ status: 502, code: "upstream_error" });
    expect(await read(new Error("premature close"))).toMatchObject({ status: 502, message: "acme: the reply broke off (premature close)." });
    const abort = Object.assign(new Error("aborted"), { name: "AbortError" });
    expect(await read(abort)).toBe(abort);
  });
});

describe("parseUpstreamJson", () => {
  it("parses JSON", () => {
    expect(parseUpstreamJson('{"id":"x","n":[1]}', "acme")).toEqual({ id: "x", n: [1] });
  });

  it("makes a body that is not JSON a 502 naming the provider", () => {
    let error: unknown;
    try {
      parseUpstreamJson("<html>Bad Gateway</html>", "acme");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ModelmuxError);
    expect(error).toMatchObject({ status: 502, type: "api_error", code: "upstream_error", message: "acme: the reply is not valid JSON." });
    expect((error as ModelmuxError).cause).toBeInstanceOf(SyntaxError);
  });

  it("makes a reply nested more than 256 levels deep a 502 naming the limit and where; 256 levels parse", () => {
    const nested = (levels: number) => `{"choices":${"[".repeat(levels - 1)}${"]".repeat(levels - 1)}}`;
    expect(parseUpstreamJson(nested(256), "acme")).toHaveProperty("choices");
    for (const levels of [257, 100_000]) {
      let error: unknown;
      try {
        parseUpstreamJson(nested(levels), "acme");
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ModelmuxError);
      expect(error).toMatchObject({ status: 502, code: "upstream_error" });
      expect((error as Error).message).toMatch(/^acme: the reply nests objects and arrays more than 256 levels deep \(at choices\[0\]\[0\].*\)\.$/);
    }
  });
});

describe("over the real client and a node:http upstream", () => {
  let server: Server;
  let url: string;
  const http = createHttpClient();

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        if (req.url === "/echo") return void res.writeHead(200, { "content-type": "application/json" }).end(Buffer.concat(chunks));
        if (req.url === "/error") return void res.writeHead(400, { "content-type": "application/json" }).end('{"detail":"bad model"}');
        if (req.url === "/big-error") return void res.writeHead(400, { "content-type": "application/json" }).end(`{"detail":"${"x".repeat(64 * 1024)}"}`);
        res.writeHead(200, { "content-type": "application/json" }).write('{"partial":');
        // `/stall` never ends; `/break` drops the connection mid-body.
        if (req.url === "/break") setTimeout(() => res.destroy(), 20);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await http.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const post = (path: string, c = call()) =>
    postUpstream(context(http).ctx, c, { url: `${url}${path}`, headers: { "content-type": "application/json" }, body: { hello: "world" }, toError });

  it("sends the body and reads the reply back as JSON", async () => {
    const { ctx } = context(http);
    const res = await post("/echo");
    expect(parseUpstreamJson(await readUpstreamText(ctx, call(), res), "acme")).toEqual({ hello: "world" });
  });

  it("maps an error reply with its body text", async () => {
    expect(await rejection(post("/error"))).toMatchObject({ status: 400, type: "invalid_request_error", message: 'acme: {"detail":"bad model"}' });
  });

  it("answers an error reply whose body is past the limit with a 502 naming the limit", async () => {
    const limited = createHttpClient({ bufferLimit: 1024 });
    try {
      const c = call();
      const error = await rejection(postUpstream(context(limited).ctx, c, { url: `${url}/big-error`, headers: { "content-type": "application/json" }, body: {}, toError }));
      expect(error).toMatchObject({ status: 502, code: "upstream_error", message: expect.stringContaining("Provider 'acme' sent a reply larger than the limit of 1024 bytes (server.upstream_body_limit)") });
    } finally {
      await limited.close();
    }
  });

  it("makes a body that stalls past the timeout a 504, and one that breaks off a 502", async () => {
    const { ctx } = context(http);
    const quick = call({ timeoutMs: 200 });
    expect(await rejection(readUpstreamText(ctx, quick, await post("/stall", quick)))).toMatchObject({ status: 504, code: "upstream_timeout" });
    expect(await rejection(readUpstreamText(ctx, call(), await post("/break")))).toMatchObject({ status: 502, code: "upstream_error" });
  });
});
