/**
 * `POST /v1/embeddings` end to end on the echo provider (docs/interface.md, "Embeddings"), in-process
 * and over node:http, with the official openai SDK's `embeddings.create`: it asks for base64 unless
 * told otherwise and decodes it, so every form must come back as the same vector. Then the refusals:
 * the body's rules, a model without `embeddings`, an unknown model; and the token rate limit.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postJson, startHarness, testConfig, TRANSPORTS, type Harness } from "./helpers/harness.ts";
import { createProbe } from "./helpers/probe-provider.ts";
import { apiFailure } from "./helpers/api-failure.ts";


const MODEL = "echo/echo-1";
const { plugin: probe } = createProbe();

const failure = apiFailure;

const norm = (vector: readonly number[]) => Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));

for (const transport of TRANSPORTS) {
  describe(`embeddings on echo (${transport})`, () => {
    let h: Harness;
    beforeAll(async () => {
      const config = testConfig(
        {
          echo: { plugin: "provider-echo", models: ["echo-1", { id: "chat-only", capabilities: { embeddings: false } }] },
          // The config says it embeds, but its plugin has no `embeddings`.
          probe: { plugin: "probe", models: [{ id: "p1", capabilities: { embeddings: true } }] },
        },
        { aliases: { vectors: MODEL } },
      );
      h = await startHarness(config, transport, { plugins: { probe } });
    });
    afterAll(() => h.close());

    it("one text: the SDK's default base64, decoded, is the same vector as the numbers", async () => {
      const { data: decoded, response } = await h.openai.embeddings.create({ model: MODEL, input: "The quick brown fox" }).withResponse();
      const numbers = await h.openai.embeddings.create({ model: MODEL, input: "The quick brown fox", encoding_format: "float" });
      expect(numbers).toMatchObject({ object: "list", model: "echo-1", data: [{ object: "embedding", index: 0 }], usage: { prompt_tokens: 5, total_tokens: 5 } });
      expect(numbers.data[0]!.embedding).toHaveLength(256);
      expect(norm(numbers.data[0]!.embedding)).toBeCloseTo(1, 5);
      expect(decoded.data[0]!.embedding).toEqual(numbers.data[0]!.embedding);
      expect(response.headers.get("x-modelmux-model")).toBe(MODEL);
      expect(response.headers.get("x-modelmux-attempts")).toBe("1");
    });

    it("base64 as asked: little-endian float32 of the vector", async () => {
      const reply = await h.openai.embeddings.create({ model: MODEL, input: "hello", encoding_format: "base64" });
      const text = reply.data[0]!.embedding as unknown as string;
      expect(typeof text).toBe("string");
      const bytes = Buffer.from(text, "base64");
      const numbers = await h.openai.embeddings.create({ model: MODEL, input: "hello", encoding_format: "float" });
      expect(Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4))).toEqual(numbers.data[0]!.embedding);
    });

    it("several texts, in order; the same text, the same vector; through an alias", async () => {
      const reply = await h.openai.embeddings.create({ model: "vectors", input: ["first text", "second text", "first text"] });
      expect(reply.data.map((item) => item.index)).toEqual([0, 1, 2]);
      expect(reply.data[2]!.embedding).toEqual(reply.data[0]!.embedding);
      expect(reply.data[1]!.embedding).not.toEqual(reply.data[0]!.embedding);
    });

    it("token ids, one input or several, and dimensions", async () => {
      const one = await h.openai.embeddings.create({ model: MODEL, input: [15339, 1917], dimensions: 32 });
      expect(one.data).toHaveLength(1);
      expect(one.data[0]!.embedding).toHaveLength(32);
      expect(one.usage).toEqual({ prompt_tokens: 2, total_tokens: 2 });
      const several = await h.openai.embeddings.create({ model: MODEL, input: [[15339, 1917], [15339]], dimensions: 32 });
      expect(several.data[0]!.embedding).toEqual(one.data[0]!.embedding);
      expect(several.data).toHaveLength(2);
    });

    it("refuses a body that breaks the rules, naming the field", async () => {
      const empty = await failure(h.openai.embeddings.create({ model: MODEL, input: "" }));
      expect(empty).toMatchObject({ status: 400, code: "invalid_value", param: "input" });
      expect((await failure(h.openai.embeddings.create({ model: MODEL, input: [] }))).param).toBe("input");
      expect((await failure(h.openai.embeddings.create({ model: MODEL, input: "x", dimensions: 0 }))).message).toMatch(/dimensions: must be >= 1/);
      const unknown = await h.request("/v1/embeddings", postJson({ model: MODEL, input: "x", task_type: "query" }));
      expect(unknown.status).toBe(400);
      expect((await unknown.json()).error).toMatchObject({ code: "unknown_field", param: "task_type" });
    });

    it("a model without embeddings is 400 unsupported_feature; an unknown one 404", async () => {
      const chatOnly = await failure(h.openai.embeddings.create({ model: "echo/chat-only", input: "x" }));
      expect(chatOnly).toMatchObject({ status: 400, code: "unsupported_feature", param: "model" });
      expect(chatOnly.message).toMatch(/Model 'echo\/chat-only' does not support embeddings; if it does, set capabilities: \{ embeddings: true \}/);
      const noMethod = await failure(h.openai.embeddings.create({ model: "probe/p1", input: "x" }));
      expect(noMethod).toMatchObject({ status: 400, code: "unsupported_feature" });
      expect(noMethod.message).toMatch(/its provider plugin has no embeddings/);
      expect(await failure(h.openai.embeddings.create({ model: "echo/nothing", input: "x" }))).toMatchObject({ status: 404, code: "model_not_found" });
    });
  });
}

describe("embeddings and the token rate limit", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(testConfig({ echo: { plugin: "provider-echo", models: ["echo-1"] } }, { rate_limit: { app: { requests: 100, tokens: 40, window: "60s" } } }), "http");
  });
  afterAll(() => h.close());

  it("counts each reply's usage, holds token ids while the request runs, and refuses more ids than the limit", async () => {
    const first = await h.request("/v1/embeddings", postJson({ model: MODEL, input: "sixteen chars..." }));
    expect(first.status).toBe(200);
    expect((await first.json()).usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
    expect(first.headers.get("x-ratelimit-remaining-tokens")).toBe("40");
    // The 30 ids are held before the call: the headers show them taken along with the first reply's 4.
    const second = await h.request("/v1/embeddings", postJson({ model: MODEL, input: Array(30).fill(7) }));
    expect(second.status).toBe(200);
    expect(second.headers.get("x-ratelimit-remaining-tokens")).toBe("6");
    const refused = await h.request("/v1/embeddings", postJson({ model: MODEL, input: Array(41).fill(7) }));
    expect(refused.status).toBe(429);
    expect((await refused.json()).error).toMatchObject({ code: "rate_limit_exceeded", param: "input", message: expect.stringMatching(/input is 41/) });
  });
});
