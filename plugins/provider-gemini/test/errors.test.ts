import { describe, expect, it } from "vitest";
import { ModelmuxError, toBodyReadError } from "@modelmux/core";
import { parseErrorBody, readGoogleError, redactSecrets, retryDelaySeconds, toProviderError, toStreamError } from "../src/errors.ts";

const KEY = "AIzaSyD-live-secret-key-0123456789abcdef";
const googleError = (code: number, message: string, status: string, details?: object[]) => JSON.stringify({ error: { code, message, status, ...(details ? { details } : {}) } });
const retryInfo = (retryDelay: string) => ({ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay });

describe("readGoogleError / parseErrorBody", () => {
  it("reads Google's error object and its RetryInfo detail", () => {
    const quota = { "@type": "type.googleapis.com/google.rpc.QuotaFailure", violations: [{ quotaMetric: "generate_content_free_tier_requests" }] };
    expect(parseErrorBody(429, googleError(429, "You exceeded your current quota.", "RESOURCE_EXHAUSTED", [quota, retryInfo("37s")]))).toEqual({
      message: "You exceeded your current quota.",
      status: "RESOURCE_EXHAUSTED",
      code: 429,
      retryDelay: "37s",
    });
  });

  it("reads the array form and a plain error string", () => {
    expect(readGoogleError([{ error: { code: 400, message: "bad", status: "INVALID_ARGUMENT" } }])?.message).toBe("bad");
    expect(readGoogleError({ error: "proxy said no" })).toEqual({ message: "proxy said no", status: null, code: null, retryDelay: null });
    expect(readGoogleError({ message: "no error key" })).toBeUndefined();
  });

  it("keeps a short, flattened excerpt of a non-JSON body, and names the status of an empty one", () => {
    const { message } = parseErrorBody(502, `<html>\n  <body>Bad   Gateway</body>\n</html>${"x".repeat(500)}`);
    expect(message.startsWith("<html> <body>Bad Gateway</body> </html>")).toBe(true);
    expect(message.length).toBeLessThanOrEqual(201);
    expect(parseErrorBody(503, " ").message).toBe("HTTP 503 with an empty body");
  });
});

describe("retryDelaySeconds", () => {
  it.each([
    ["30s", "30"],
    ["1.5s", "2"],
    ["0.2s", "1"],
    ["0s", "1"],
    ["soon", null],
    ["30", null],
  ])("%s -> %s", (delay, seconds) => {
    expect(retryDelaySeconds(delay)).toBe(seconds);
  });
});

describe("redactSecrets", () => {
  it("removes the configured key, Google-shaped keys and key= parameters", () => {
    expect(redactSecrets(`bad key ${KEY}.`, KEY)).toBe("bad key [redacted].");
    expect(redactSecrets("proxy token my-plain-secret rejected", "my-plain-secret")).toBe("proxy token [redacted] rejected");
    expect(redactSecrets("key AIzaSyOtherKey_123456789 leaked")).toBe("key [redacted] leaked");
    expect(redactSecrets("GET /v1beta/models/x?alt=sse&key=abc.def-1 failed")).toBe("GET /v1beta/models/x?alt=sse&key=[redacted] failed");
    expect(redactSecrets("nothing to hide")).toBe("nothing to hide");
  });
});

describe("toProviderError", () => {
  const map = (status: number, text: string, headers = {}) => toProviderError("gemini", { status, text, headers }, KEY);

  it("keeps a 400's status and message, with Google's status as the code", () => {
    const error = map(400, googleError(400, "* GenerateContentRequest.contents: contents is not specified", "INVALID_ARGUMENT"));
    expect(error).toBeInstanceOf(ModelmuxError);
    expect(error.toEnvelope()).toEqual({
      error: { message: "gemini: * GenerateContentRequest.contents: contents is not specified", type: "invalid_request_error", code: "INVALID_ARGUMENT", param: null },
    });
    expect(error.status).toBe(400);
  });

  it.each([
    [401, "UNAUTHENTICATED"],
    [403, "PERMISSION_DENIED"],
    [404, "NOT_FOUND"],
  ])("keeps a %i", (status, name) => {
    expect(map(status, googleError(status, "no", name))).toMatchObject({ status, type: "invalid_request_error", code: name });
  });

  // The bodies as Google sends them: another target may have a larger context (README, "Routing and resilience").
  it.each([
    ["Gemini API", '{\n  "error": {\n    "code": 400,\n    "message": "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).",\n    "status": "INVALID_ARGUMENT"\n  }\n}\n'],
    ["Vertex AI", '{"error":{"code":400,"message":"Unable to submit request because the input token count is 131335 but model only supports up to 131072. Reduce the input token count and try again. You can also use the CountTokens API to calculate prompt token count and billable characters. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/learn/models","status":"INVALID_ARGUMENT"}}'],
  ])("a request past the model's context is 400 context_length_exceeded, with Google's message (%s)", (_, body) => {
    const error = map(400, body);
    const message = (JSON.parse(body) as { error: { message: string } }).error.message;
    expect(error.toEnvelope()).toEqual({ error: { message: `gemini: ${message}`, type: "invalid_request_error", code: "context_length_exceeded", param: null } });
    expect(error.status).toBe(400);
    expect(error.upstream).toEqual({ status: 400 });
  });

  it("other INVALID_ARGUMENTs keep Google's status as the code, even when they speak of tokens", () => {
    const error = map(400, googleError(400, "Unable to submit request because it has a maxOutputTokens value of 100000 but the supported range is from 1 (inclusive) to 65537 (exclusive).", "INVALID_ARGUMENT"));
    expect(error.code).toBe("INVALID_ARGUMENT");
  });

  it("never passes the key on, even when Google echoes it", () => {
    const error = map(400, googleError(400, `API key not valid: ${KEY}`, "INVALID_ARGUMENT"));
    expect(error.message).not.toContain("secret");
    expect(error.message).toContain("[redacted]");
  });

  it("maps 429 to rate_limit_error with retry-after from the header first, else from RetryInfo", () => {
    const body = googleError(429, "Resource has been exhausted (e.g. check quota).", "RESOURCE_EXHAUSTED", [retryInfo("30s")]);
    expect(map(429, body)).toMatchObject({ status: 429, type: "rate_limit_error", code: "rate_limit_exceeded", headers: { "retry-after": "30" } });
    expect(map(429, body, { "retry-after": "12" }).headers).toEqual({ "retry-after": "12" });
    expect(map(429, googleError(429, "quota", "RESOURCE_EXHAUSTED")).headers).toEqual({});
  });

  it.each([500, 503, 504])("maps %i to 502 upstream_error with the message kept", (status) => {
    const error = map(status, googleError(status, "The model is overloaded. Please try again later.", "UNAVAILABLE"));
    expect(error).toMatchObject({ status: 502, type: "api_error", code: "upstream_error" });
    expect(error.message).toContain("overloaded");
  });

  it("tolerates a non-JSON error body", () => {
    expect(map(400, "Bad Request")).toMatchObject({ status: 400, message: "gemini: Bad Request", code: null });
  });
});

describe("toStreamError", () => {
  it("maps an error object past the model's context, in the array form too, to 400 context_length_exceeded", () => {
    const error = { code: 400, message: "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).", status: "INVALID_ARGUMENT" };
    expect(toStreamError("gemini", { error })).toMatchObject({ status: 400, code: "context_length_exceeded" });
    expect(toStreamError("gemini", [{ error }])).toMatchObject({ status: 400, code: "context_length_exceeded" });
  });
});

describe("toBodyReadError", () => {
  it("re-throws our own abort, maps a stall to 504 and anything else to 502", () => {
    const abort = Object.assign(new Error("aborted"), { name: "AbortError" });
    expect(toBodyReadError(abort, "gemini", 1000)).toBe(abort);
    expect(toBodyReadError(Object.assign(new Error("t"), { code: "UND_ERR_BODY_TIMEOUT" }), "gemini", 1000)).toMatchObject({ status: 504, code: "upstream_timeout" });
    expect(toBodyReadError(Object.assign(new Error("closed"), { code: "UND_ERR_SOCKET" }), "gemini", 1000)).toMatchObject({ status: 502, code: "upstream_error" });
    expect(toBodyReadError(new TypeError("odd"), "gemini", 1000)).toMatchObject({ status: 502, code: "upstream_error" });
    const ours = new ModelmuxError("x", { status: 429, type: "rate_limit_error", code: null });
    expect(toBodyReadError(ours, "gemini", 1000)).toBe(ours);
  });
});
