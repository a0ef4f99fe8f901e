import { describe, expect, it } from "vitest";
import { ModelmuxError, toBodyReadError } from "@modelmux/core";
import { parseErrorBody, redactSecrets, toProviderError, toStreamError } from "../src/errors.ts";

const anthropicError = (type: string, message: string) => JSON.stringify({ type: "error", error: { type, message }, request_id: "req_1" });

describe("parseErrorBody", () => {
  it("reads Anthropic's error body; the error type is the code", () => {
    expect(parseErrorBody(400, anthropicError("invalid_request_error", "max_tokens: Field required"))).toEqual({ message: "max_tokens: Field required", type: "invalid_request_error" });
  });

  it.each([
    ['{"error":"upstream connect error"}', "upstream connect error"],
    ['{"message":"Forbidden"}', "Forbidden"],
  ])("reads a proxy's looser shape %s", (text, message) => {
    expect(parseErrorBody(403, text)).toEqual({ message, type: null });
  });

  it("keeps a short, flattened excerpt of a non-JSON body, and names the status of an empty one", () => {
    const { message } = parseErrorBody(502, `<html>\n <body>Bad   Gateway</body></html>${"x".repeat(500)}`);
    expect(message.startsWith("<html> <body>Bad Gateway</body></html>")).toBe(true);
    expect(message.length).toBeLessThanOrEqual(201);
    expect(parseErrorBody(503, "")).toEqual({ message: "HTTP 503 with an empty body", type: null });
  });
});

describe("redactSecrets", () => {
  it("removes the configured key, Anthropic-shaped keys and masked keys", () => {
    expect(redactSecrets("key my-proxy-key is bad", "my-proxy-key")).toBe("key [redacted] is bad");
    expect(redactSecrets("invalid key sk-ant-api03-AbC_12-xyz.")).toBe("invalid key [redacted].");
    expect(redactSecrets("key abc****wxyz is bad")).toBe("key [redacted] is bad");
    expect(redactSecrets("nothing to hide")).toBe("nothing to hide");
  });
});

describe("toProviderError", () => {
  const reply = (status: number, text: string, headers: Record<string, string> = {}) => toProviderError("anthropic", { status, text, headers }, "sk-ant-secret");

  it.each([400, 401, 403, 404, 413])("keeps a %i with the message and the error type as code", (status) => {
    const error = reply(status, anthropicError("invalid_request_error", "messages: at least one message is required"));
    expect(error.toEnvelope()).toEqual({
      error: { message: "anthropic: messages: at least one message is required", type: "invalid_request_error", code: "invalid_request_error", param: null },
    });
    expect(error.status).toBe(status);
  });

  it("maps 429 to rate_limit_error and keeps retry-after", () => {
    const error = reply(429, anthropicError("rate_limit_error", "Number of request tokens has exceeded your rate limit"), { "retry-after": "12" });
    expect(error).toMatchObject({ status: 429, type: "rate_limit_error", code: "rate_limit_exceeded", headers: { "retry-after": "12" } });
  });

  it.each([500, 503, 529])("maps %i to 502 upstream_error, keeping the message", (status) => {
    const error = reply(status, anthropicError(status === 529 ? "overloaded_error" : "api_error", "Overloaded"));
    expect(error).toMatchObject({ status: 502, type: "api_error", code: "upstream_error", message: `anthropic: Overloaded (status ${status})` });
  });

  // The bodies as Anthropic sends them: another target may have a larger context (README, "Routing and resilience").
  it.each([
    ["the prompt", '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208656 tokens > 200000 maximum"},"request_id":"req_011CWdepJvA2D819tdYYq4h7"}'],
    ["the prompt and max_tokens", '{"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, decrease input length or `max_tokens` and try again"},"request_id":"req_011CUB2XUHWkFnQzxcKBbjpF"}'],
  ])("a request past the model's context is 400 context_length_exceeded, with Anthropic's message (%s)", (_, body) => {
    const error = reply(400, body);
    const message = (JSON.parse(body) as { error: { message: string } }).error.message;
    expect(error.toEnvelope()).toEqual({ error: { message: `anthropic: ${message}`, type: "invalid_request_error", code: "context_length_exceeded", param: null } });
    expect(error.status).toBe(400);
    expect(error.upstream).toEqual({ status: 400 });
  });

  it("other 400s keep Anthropic's type as the code, even when they speak of tokens", () => {
    const error = reply(400, anthropicError("invalid_request_error", "max_tokens: 300000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-5"));
    expect(error.code).toBe("invalid_request_error");
  });

  it("never lets the key through", () => {
    expect(reply(401, anthropicError("authentication_error", "invalid x-api-key sk-ant-secret")).message).toBe("anthropic: invalid x-api-key [redacted]");
  });
});

describe("toStreamError", () => {
  it.each([
    ["overloaded_error", 502],
    ["api_error", 502],
    ["timeout_error", 502],
    ["unknown_new_error", 502],
    ["rate_limit_error", 429],
    ["invalid_request_error", 400],
    ["permission_error", 403],
  ])("maps an error event of type %s to %i", (type, status) => {
    expect(toStreamError("anthropic", { type: "error", error: { type, message: "m" } }).status).toBe(status);
  });

  it("maps an invalid_request_error event past the model's context to 400 context_length_exceeded", () => {
    const event = { type: "error", error: { type: "invalid_request_error", message: "prompt is too long: 208656 tokens > 200000 maximum" } };
    expect(toStreamError("anthropic", event)).toMatchObject({ status: 400, code: "context_length_exceeded" });
  });

  it("is a 502 when the event has no message", () => {
    expect(toStreamError("anthropic", { type: "error" })).toMatchObject({ status: 502, message: "anthropic: the stream carried an error without a message" });
  });
});

describe("toBodyReadError", () => {
  it("maps a body timeout to 504 and a broken socket to 502", () => {
    expect(toBodyReadError(Object.assign(new Error("t"), { code: "UND_ERR_BODY_TIMEOUT" }), "anthropic", 3000)).toMatchObject({ status: 504, code: "upstream_timeout" });
    expect(toBodyReadError(Object.assign(new Error("closed"), { code: "UND_ERR_SOCKET" }), "anthropic", 3000)).toMatchObject({ status: 502 });
  });

  it("returns our own errors and aborts unchanged, and makes anything else a 502", () => {
    const ours = new ModelmuxError("x", { status: 429, type: "rate_limit_error", code: null });
    expect(toBodyReadError(ours, "anthropic", 1)).toBe(ours);
    const abort = Object.assign(new Error("aborted"), { name: "AbortError" });
    expect(toBodyReadError(abort, "anthropic", 1)).toBe(abort);
    expect(toBodyReadError(new Error("premature close"), "anthropic", 1)).toMatchObject({ status: 502, message: "anthropic: the reply broke off (premature close)." });
  });
});
