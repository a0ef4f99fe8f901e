/**
 * Rate limits and auth on the responses and images endpoints: the same limits as chat completions,
 * counted in one place (one shared per-developer budget across the three endpoints), the
 * x-ratelimit-* headers on JSON and streamed replies, token usage of a responses stream counted,
 * and `/v1/responses` refusing identity-provider tokens (docs/interface.md, "Authentication") while
 * images take them.
 */
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ModelmuxConfig } from "@modelmux/core";
import { AUDIENCE, ISSUER, signer, startJwksServer, type JwksServer, type Signer } from "./fixtures/jwks-server.ts";
import { postJson, startHarness, testConfig, TEST_KEY, TRANSPORTS, type Harness } from "./helpers/harness.ts";

const echo: ModelmuxConfig["providers"] = { echo: { plugin: "provider-echo", models: ["echo-1"] } };
type ApiError = InstanceType<typeof OpenAI.APIError>;

for (const transport of TRANSPORTS) {
  describe(`rate limits on responses and images (${transport})`, () => {
    let h: Harness | undefined;
    afterEach(async () => {
      await h?.close();
      h = undefined;
    });

    it("one developer budget shared by chat, responses and images; headers on JSON and streams; 429 with retry-after", async () => {
      h = await startHarness(testConfig(echo, { responses: { provider: "echo" }, rate_limit: { plugin: "ratelimit-memory", developer: { requests: 4, window: "60s" } } }), transport);
      const chat = await h.request("/v1/chat/completions", postJson({ model: "echo/echo-1", messages: [{ role: "user", content: "a" }] }));
      expect(chat.headers.get("x-ratelimit-remaining-requests")).toBe("3");
      const json = await h.request("/v1/responses", postJson({ model: "echo/echo-1", input: "b" }));
      expect(json.status).toBe(200);
      expect(json.headers.get("x-ratelimit-limit-requests")).toBe("4");
      expect(json.headers.get("x-ratelimit-remaining-requests")).toBe("2");
      const stream = await h.request("/v1/responses", postJson({ model: "echo/echo-1", input: "c", stream: true }));
      expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
      expect(stream.headers.get("x-ratelimit-remaining-requests")).toBe("1");
      await stream.text();
      const image = await h.request("/v1/images/generations", postJson({ model: "echo/echo-1", prompt: "d" }));
      expect(image.status).toBe(200);
      expect(image.headers.get("x-ratelimit-remaining-requests")).toBe("0");

      for (const [path, body] of [
        ["/v1/responses", { model: "echo/echo-1", input: "e" }],
        ["/v1/images/generations", { model: "echo/echo-1", prompt: "e" }],
      ] as const) {
        const refused = await h.request(path, postJson(body));
        expect(refused.status).toBe(429);
        expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
        expect(await refused.json()).toMatchObject({ error: { type: "rate_limit_error", code: "rate_limit_exceeded" } });
      }
    });

    it("counts a responses stream's real token usage, and reserves max_output_tokens up front", async () => {
      h = await startHarness(testConfig(echo, { responses: { provider: "echo" }, rate_limit: { plugin: "ratelimit-memory", developer: { requests: 100, tokens: 60, window: "60s" } } }), transport);
      // 50 tokens echoed back on top of the input's: the stream alone spends the budget.
      const long = "x".repeat(200);
      const final = await h.openai.responses.stream({ model: "echo/echo-1", input: long }).finalResponse();
      expect(final.usage!.total_tokens).toBeGreaterThan(60);
      const next = await h.request("/v1/responses", postJson({ model: "echo/echo-1", input: long }));
      expect(next.status).toBe(429);
      // A reservation larger than the whole budget can never pass: told so, naming the field.
      const tooBig = await h.request("/v1/responses", postJson({ model: "echo/echo-1", input: "x", max_output_tokens: 61 }));
      expect(tooBig.status).toBe(429);
      expect(await tooBig.json()).toMatchObject({ error: { param: "max_output_tokens" } });
    });
  });
}

describe("identity-provider tokens on responses and images", () => {
  let idp: JwksServer;
  let key: Signer;
  let h: Harness;
  beforeAll(async () => {
    key = await signer("key-1");
    idp = await startJwksServer([key.jwk]);
    h = await startHarness(
      testConfig(echo, {
        auth: { api_keys: [{ key: TEST_KEY, app: "test-app", developer: "tester" }], jwt: { issuer: ISSUER, audience: AUDIENCE, jwks_url: idp.jwksUrl } },
        responses: { provider: "echo" },
      }),
      "http",
    );
  });
  afterAll(async () => {
    await h.close();
    await idp.close();
  });

  it("a valid JWT gets 401 on every /v1/responses route, and works on images", async () => {
    const token = await key.sign();
    const client = new OpenAI({ baseURL: h.baseURL, apiKey: token, maxRetries: 0 });
    const created = await h.openai.responses.create({ model: "echo/echo-1", input: "made with a key" });
    for (const attempt of [
      () => client.responses.create({ model: "echo/echo-1", input: "x" }),
      () => client.responses.retrieve(created.id),
      () => client.responses.cancel(created.id),
      () => client.responses.delete(created.id),
      () => client.responses.inputItems.list(created.id),
    ]) {
      const error = (await attempt().catch((e: unknown) => e)) as ApiError;
      expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
      expect(error.error).toMatchObject({ type: "api_error", code: "invalid_api_key" });
      expect(error.message).toContain("API keys only");
    }
    const image = await client.images.generate({ model: "echo/echo-1", prompt: "with a token" });
    expect(image.data).toHaveLength(1);
  });
});
