/**
 * `classifyFailure` (core/src/routing/failure.ts) on the errors the core really makes of an
 * upstream's failures: error replies read by the provider kit from a real `node:http` upstream on
 * 127.0.0.1 (OpenAI's, Anthropic's and Google's shapes), a refused connection, a stalled reply,
 * and errors that are not a provider's (our own validation, a bug, the client's abort). The client
 * still sees what it saw before: the `upstream` facts are beside the envelope, never in it.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { internalError, invalidRequest, ModelmuxError, providerError, rateLimited, upstreamError } from "../src/errors.ts";
import { errorMapper } from "../src/provider-kit/error-reply.ts";
import { createHttpClient } from "../src/upstream/client.ts";
import { classifyFailure } from "../src/routing/failure.ts";

/** `/reply/<status>?body=<json>&h=<name>:<value>`: that status, body and headers. `/stall`: headers never come. */
let server: Server;
let base: string;
const http = createHttpClient();

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname === "/stall") return;
    const headers: Record<string, string> = { "content-type": "application/json" };
    for (const h of url.searchParams.getAll("h")) {
      const at = h.indexOf(":");
      headers[h.slice(0, at)] = h.slice(at + 1);
    }
    res.writeHead(Number(url.pathname.split("/")[2]), headers).end(url.searchParams.get("body") ?? "");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await http.close();
});

const openai = errorMapper({ provider: "openai" });
const anthropic = errorMapper({ provider: "anthropic", code: "type" });
const gemini = errorMapper({ provider: "gemini", code: "status" });

/** The error the kit makes of a real reply of `status` with `body` and headers. */
async function replyError(mapper: typeof openai, status: number, body: unknown, headers: Record<string, string> = {}): Promise<ModelmuxError> {
  const query = new URLSearchParams({ body: JSON.stringify(body) });
  for (const [name, value] of Object.entries(headers)) query.append("h", `${name}:${value}`);
  const res = await http.request({ url: `${base}/reply/${status}?${query}`, provider: "p" });
  return mapper.fromReply({ status: res.status, text: await res.body.text(), headers: res.headers });
}

const openaiBody = (message: string, code: string | null = null) => ({ error: { message, type: "invalid_request_error", code, param: null } });

describe("classifyFailure: a provider's error reply", () => {
  it.each([408, 429, 500, 502, 503, 504])("OpenAI %i is retried, with its status kept beside the envelope", async (status) => {
    const error = await replyError(openai, status, openaiBody("busy"));
    expect(classifyFailure(error)).toEqual({ outcome: "retryable", status, reason: `status ${status}` });
    // What the client sees is unchanged: a 5xx is still 502 upstream_error.
    if (status >= 500) expect([error.status, error.code]).toEqual([502, "upstream_error"]);
  });

  it("Anthropic's 529 overloaded is retried", async () => {
    const error = await replyError(anthropic, 529, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
    expect(error.toEnvelope().error).toMatchObject({ type: "api_error", code: "upstream_error" });
    expect(classifyFailure(error)).toMatchObject({ outcome: "retryable", status: 529 });
  });

  it("keeps Retry-After in seconds, as an HTTP date, and OpenAI's retry-after-ms (preferred, exact)", async () => {
    const seconds = await replyError(openai, 429, openaiBody("slow down", "rate_limit_exceeded"), { "retry-after": "3" });
    expect(classifyFailure(seconds)).toEqual({ outcome: "retryable", status: 429, retryAfterMs: 3000, reason: "status 429" });
    expect(seconds.headers).toEqual({ "retry-after": "3" });

    const now = Date.parse("Wed, 21 Oct 2026 07:28:00 GMT");
    const date = await replyError(openai, 503, openaiBody("maintenance"), { "retry-after": "Wed, 21 Oct 2026 07:28:07 GMT" });
    expect(classifyFailure(date, now).retryAfterMs).toBe(7000);
    // A 503's Retry-After is for the router only: the client's 502 carries none, as before.
    expect(date.headers).toBeUndefined();

    const ms = await replyError(openai, 429, openaiBody("slow down"), { "retry-after": "1", "retry-after-ms": "250" });
    expect(classifyFailure(ms).retryAfterMs).toBe(250);
    expect(ms.headers).toEqual({ "retry-after": "1" });
  });

  it("takes Google's RetryInfo delay exactly", async () => {
    const body = { error: { code: 429, message: "Quota", status: "RESOURCE_EXHAUSTED", details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "1.5s" }] } };
    const error = await replyError(gemini, 429, body);
    expect(error.headers).toEqual({ "retry-after": "2" });
    expect(classifyFailure(error)).toMatchObject({ outcome: "retryable", retryAfterMs: 1500 });
  });

  it("sends 400 context_length_exceeded to the next target", async () => {
    const error = await replyError(openai, 400, openaiBody("This model's maximum context length is 8192 tokens.", "context_length_exceeded"));
    expect(classifyFailure(error)).toEqual({ outcome: "next", status: 400, reason: "context_length_exceeded" });
  });

  it("returns a content-policy refusal as it is", async () => {
    const policy = await replyError(openai, 400, openaiBody("Your request was rejected by the safety system.", "content_policy_violation"));
    expect(classifyFailure(policy)).toEqual({ outcome: "final", status: 400, reason: "content policy" });
    const azure = await replyError(openai, 400, openaiBody("The response was filtered.", "content_filter"));
    expect(classifyFailure(azure)).toMatchObject({ outcome: "final", reason: "content policy" });
  });

  it.each([400, 401, 403, 404, 413, 422])("any other %i is final", async (status) => {
    const error = await replyError(anthropic, status, { type: "error", error: { type: "invalid_request_error", message: "no" } });
    expect(classifyFailure(error)).toMatchObject({ outcome: "final", status });
  });

  it("a provider 5xx outside the retried ones goes to the next target", async () => {
    expect(classifyFailure(await replyError(openai, 501, openaiBody("not here")))).toMatchObject({ outcome: "next", status: 501 });
  });

  it("an error event inside a stream reads like the reply its status stands for", () => {
    const gem = errorMapper({ provider: "gemini", code: "status", streamStatus: (info) => info.httpStatus });
    expect(classifyFailure(gem.fromEvent({ error: { code: 503, message: "overloaded", status: "UNAVAILABLE" } }))).toMatchObject({ outcome: "retryable", status: 503 });
    // Without a status it says nothing worth a retry of the same target: the next one is tried.
    expect(classifyFailure(openai.fromEvent({ error: { message: "server_error" } }))).toMatchObject({ outcome: "next", reason: "unreadable reply" });
  });
});

describe("classifyFailure: no reply", () => {
  it("a refused connection is retried", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = await http.request({ url: `http://127.0.0.1:${port}/`, provider: "p" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelmuxError);
    expect(classifyFailure(error)).toMatchObject({ outcome: "retryable" });
    expect(classifyFailure(error).status).toBeUndefined();
  });

  it("a call past its timeout goes to the next target", async () => {
    const error = await http.request({ url: `${base}/stall`, provider: "p", timeoutMs: 50 }).catch((e: unknown) => e);
    expect((error as ModelmuxError).code).toBe("upstream_timeout");
    expect(classifyFailure(error)).toEqual({ outcome: "timeout", reason: "timeout" });
  });

  it("reads raw Node and undici codes no one mapped yet", () => {
    expect(classifyFailure(Object.assign(new Error("connect"), { code: "ECONNREFUSED" }))).toMatchObject({ outcome: "retryable" });
    expect(classifyFailure(Object.assign(new Error("reset"), { code: "ECONNRESET" }))).toMatchObject({ outcome: "retryable" });
    expect(classifyFailure(Object.assign(new Error("slow"), { code: "UND_ERR_CONNECT_TIMEOUT" }))).toMatchObject({ outcome: "timeout" });
    expect(classifyFailure(Object.assign(new Error("socket"), { code: "UND_ERR_SOCKET" }))).toMatchObject({ outcome: "retryable" });
  });
});

describe("classifyFailure: not a provider's failure", () => {
  it("our own validation, limits and bugs are final", () => {
    expect(classifyFailure(invalidRequest("bad", { param: "messages" }))).toEqual({ outcome: "final", reason: "invalid_value" });
    // Our own 429 (a limit of the router) is not the provider's: never retried.
    expect(classifyFailure(rateLimited("limit", 3))).toEqual({ outcome: "final", reason: "rate_limit_exceeded" });
    // Our own 408 (a slow client) neither.
    expect(classifyFailure(new ModelmuxError("slow client", { status: 408, type: "invalid_request_error", code: "request_timeout" }))).toMatchObject({ outcome: "final" });
    expect(classifyFailure(internalError(new Error("bug")))).toMatchObject({ outcome: "final" });
    expect(classifyFailure(new TypeError("undefined is not a function"))).toEqual({ outcome: "final", reason: "internal error" });
    expect(classifyFailure("a string")).toMatchObject({ outcome: "final" });
  });

  it("a plugin's own content-policy 400 (Gemini's blocked image prompt) is final", () => {
    expect(classifyFailure(invalidRequest("blocked", { code: "content_policy_violation" }))).toEqual({ outcome: "final", reason: "content policy" });
  });

  it("an unreadable reply goes to the next target: the same one would answer the same", () => {
    expect(classifyFailure(upstreamError("p: the reply is not JSON"))).toMatchObject({ outcome: "next", reason: "unreadable reply" });
  });

  it("the client's abort is never retried", () => {
    expect(classifyFailure(Object.assign(new Error("The client closed the connection."), { name: "AbortError" }))).toEqual({ outcome: "final", reason: "client left" });
  });

  it("providerError's facts leave the envelope and headers as they were", () => {
    const error = providerError("openai", { status: 503, message: "busy", retryAfter: "5", retryAfterMs: 5000 });
    expect(error.toEnvelope()).toEqual({ error: { message: "openai: busy (status 503)", type: "api_error", code: "upstream_error", param: null } });
    expect(error.headers).toBeUndefined();
    expect(error.upstream).toEqual({ status: 503, retryAfter: "5", retryAfterMs: 5000 });
  });
});
