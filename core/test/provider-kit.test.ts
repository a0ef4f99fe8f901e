/**
 * The provider kit's claims that no plugin test covers: `base_url` refused at setup naming the
 * option, headers merged case-insensitively and never logged, the longest capability prefix winning.
 */
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { apiRoot, capabilityTable, joinUrl, upstreamHeaders, withCallHeader } from "../src/index.ts";

describe("apiRoot / joinUrl", () => {
  it("joins a root with or without a trailing slash or a path prefix", () => {
    expect(joinUrl(apiRoot("http://127.0.0.1:8080/openai/v1//", "https://x.example"), "/chat/completions")).toBe("http://127.0.0.1:8080/openai/v1/chat/completions");
    expect(joinUrl(apiRoot(undefined, "https://api.example/v1"), "models")).toBe("https://api.example/v1/models");
  });

  it.each(["localhost:8080", "ftp://files.example", "not a url"])("refuses %s, naming the option", (value) => {
    expect(() => apiRoot(value, "https://api.example", "base_url")).toThrow(/^base_url must be an absolute http\(s\) URL/);
  });
});

describe("upstreamHeaders", () => {
  const headers = upstreamHeaders({ apiKey: "sk-live-1234", auth: "x-api-key", fixed: { "Anthropic-Version": "v", skipped: undefined }, extra: { "X-API-Key": "gateway-key-5678", "X-Title": "app" } });

  it("merges credential, fixed and configured headers, the configured last whatever their case", () => {
    expect({ ...headers.stream }).toEqual({ "content-type": "application/json", accept: "text/event-stream", "x-api-key": "gateway-key-5678", "anthropic-version": "v", "x-title": "app" });
    expect(headers.secrets).toEqual(["sk-live-1234", "gateway-key-5678"]);
  });

  it("never shows a credential to JSON.stringify or util.inspect, per-call copies included", () => {
    const call = withCallHeader(headers.json, "x-client-request-id", "req_1");
    for (const text of [JSON.stringify(headers.json), inspect(headers.json), JSON.stringify(call), inspect(call)]) {
      expect(text).not.toContain("gateway-key-5678");
      expect(text).toContain("x-title");
    }
    expect(call["x-api-key"]).toBe("gateway-key-5678");
    expect(Object.keys(call)).toContain("x-client-request-id");
  });
});

describe("capabilityTable", () => {
  it("takes the longest prefix whatever the order, patterns first, the fallback else, a copy each time", () => {
    const capabilities = capabilityTable({ prefixes: { "m-": { tools: true }, "m-big-": { vision: true } }, patterns: [[/-img$/, { images: true }]], fallback: { chat: true } });
    expect(capabilities("M-Big-2")).toEqual({ vision: true });
    expect(capabilities("m-small")).toEqual({ tools: true });
    expect(capabilities("m-big-img")).toEqual({ images: true });
    capabilities("other").chat = false;
    expect(capabilities("other")).toEqual({ chat: true });
  });
});
