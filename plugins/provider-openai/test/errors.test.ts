import { describe, expect, it } from "vitest";
import { ModelmuxError, toBodyReadError } from "@modelmux/core";
import { parseErrorBody, readRetryAfter, redactSecrets, toProviderError, toStreamError } from "../src/errors.ts";


const openaiError = (message: string, type: string, code: string | null, param: string | null = null) => JSON.stringify({ error: { message, type, code, param } });

describe("parseErrorBody", () => {
  it("reads OpenAI's error object", () => {
    expect(parseErrorBody(400, openaiError("Bad tools", "invalid_request_error", "invalid_value", "tools[0]"))).toEqual({
      message: "Bad tools",
      code: "invalid_value",
      param: "tools[0]",
    });
  });

  it("does not take the error type for a code", () => {
    expect(parseErrorBody(400, openaiError("Bad", "invalid_request_error", null)).code).toBeNull();
  });

  it.each([
    ['{"error":"model not loaded"}', "model not loaded"],
    ['{"object":"error","message":"context too long","type":"BadRequestError","param":null,"code":400}', "context too long"],
    ['{"detail":"Not Found"}', "Not Found"],
  ])("reads a compatible server's shape %s", (text, message) => {
    expect(parseErrorBody(400, text).message).toBe(message);
  });

  it("keeps a short, flattened excerpt of a non-JSON body", () => {
    const html = `<html>\n  <body>Bad   Gateway</body>\n</html>${"x".repeat(500)}`;
    const { message } = parseErrorBody(502, html);
    expect(message.startsWith("<html> <body>Bad Gateway</body> </html>")).toBe(true);
    expect(message.length).toBeLessThanOrEqual(201);
  });

  it("names the status when the body is empty", () => {
    expect(parseErrorBody(503, "  ").message).toBe("HTTP 503 with an empty body");
  });
});

describe("redactSecrets", () => {
  it("removes the configured key, sk- keys and masked keys", () => {
    expect(redactSecrets("key my-secret-key is bad", "my-secret-key")).toBe("key [redacted] is bad");
    expect(redactSecrets("Incorrect API key provided: sk-proj-abc123. See docs.")).toBe("Incorrect API key provided: [redacted]. See docs.");
    expect(redactSecrets("Incorrect API key provided: gsk********wxyz.")).toBe("Incorrect API key provided: [redacted].");
    expect(redactSecrets("nothing to hide")).toBe("nothing to hide");
  });
});

describe("readRetryAfter", () => {
  it("prefers retry-after and falls back to retry-after-ms, rounded up", () => {
    expect(readRetryAfter({ "retry-after": "7", "retry-after-ms": "100" })).toBe("7");
    expect(readRetryAfter({ "retry-after-ms": "1500" })).toBe("2");
    expect(readRetryAfter({ "retry-after": ["3", "4"] })).toBe("3");
    expect(readRetryAfter({})).toBeNull();
  });
});

describe("toProviderError", () => {
  const map = (status: number, text: string, headers = {}) => toProviderError("groq", { status, text, headers }, "sk-live-secret");

  it("keeps a 400's status, message, code and param", () => {
    const error = map(400, openaiError("Invalid schema for function 'f'", "invalid_request_error", "invalid_function_parameters", "tools[0].function.parameters"));
    expect(error).toBeInstanceOf(ModelmuxError);
    expect(error.toEnvelope()).toEqual({
      error: { message: "groq: Invalid schema for function 'f'", type: "invalid_request_error", code: "invalid_function_parameters", param: "tools[0].function.parameters" },
    });
    expect(error.status).toBe(400);
  });

  it("keeps a 401 and never the key it echoes", () => {
    const error = map(401, openaiError("Incorrect API key provided: sk-live-secret", "invalid_request_error", "invalid_api_key"));
    expect(error).toMatchObject({ status: 401, type: "invalid_request_error", code: "invalid_api_key" });
    expect(error.message).not.toContain("secret");
  });

  it("maps 429 to rate_limit_error with its retry-after", () => {
    const error = map(429, openaiError("Rate limit reached", "requests", "rate_limit_exceeded"), { "retry-after": "12" });
    expect(error).toMatchObject({ status: 429, type: "rate_limit_error", code: "rate_limit_exceeded", headers: { "retry-after": "12" } });
  });

  it.each([500, 503, 529])("maps %i to 502 upstream_error with the message kept", (status) => {
    const error = map(status, openaiError("overloaded", "server_error", null));
    expect(error).toMatchObject({ status: 502, type: "api_error", code: "upstream_error" });
    expect(error.message).toContain("overloaded");
  });
});

describe("toStreamError / toBodyReadError", () => {
  it("turns an in-stream error into 502 with the message", () => {
    const error = toStreamError("openai", { error: { message: "server_error happened" } });
    expect(error).toMatchObject({ status: 502, code: "upstream_error", message: "openai: server_error happened" });
  });

  it("re-throws our own abort as is, maps anything else to 502", () => {
    const abort = Object.assign(new Error("aborted"), { name: "AbortError" });
    expect(toBodyReadError(abort, "openai", 1000)).toBe(abort);
    const socket = Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" });
    const mapped = toBodyReadError(socket, "openai", 1000) as Error;
    expect(mapped).toMatchObject({ status: 502, code: "upstream_error" });
    expect(mapped.message).toContain("UND_ERR_SOCKET");
    const stalled = Object.assign(new Error("body timeout"), { code: "UND_ERR_BODY_TIMEOUT", name: "BodyTimeoutError" });
    expect(toBodyReadError(stalled, "openai", 1000)).toMatchObject({ status: 504, code: "upstream_timeout" });
    expect(toBodyReadError(new TypeError("a bug while reading"), "openai", 1000)).toMatchObject({ status: 502, code: "upstream_error" });
  });
});
