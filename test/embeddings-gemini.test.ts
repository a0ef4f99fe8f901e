/**
 * Embeddings through provider-gemini (docs/interface.md, "Embeddings"), end to end: the official
 * openai SDK's `embeddings.create` through the router (in-process and over node:http) to the fake
 * Gemini API on 127.0.0.1, which answers `:embedContent` and `:batchEmbedContents` in Google's wire
 * format. One text is one `embedContent`; several are batches of at most 100; `dimensions` is
 * `outputDimensionality`; Gemini reports no usage, so the reply has none; token ids never leave.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { fakeVector, FAKE_EMBEDDING_DIMENSIONS } from "./fixtures/fake-embeddings.ts";
import { startFakeGemini, type FakeGemini } from "./fixtures/fake-gemini.ts";
import { startHarness, testConfig, TRANSPORTS, type Harness } from "./helpers/harness.ts";
import { apiFailure } from "./helpers/api-failure.ts";


const UPSTREAM_KEY = "AIzaSyEmbeddingsEndToEnd-0123456789abcd";
const MODEL = "gemini/gemini-embedding-001";

const failure = apiFailure;

for (const transport of TRANSPORTS) {
  describe(`embeddings via provider-gemini (${transport})`, () => {
    let fake: FakeGemini;
    let h: Harness;
    beforeAll(async () => {
      fake = await startFakeGemini({ apiKey: UPSTREAM_KEY });
      const gemini = { plugin: "provider-gemini", base_url: fake.url, api_key: UPSTREAM_KEY, models: ["gemini-embedding-001", "gemini-2.5-flash"] };
      h = await startHarness(testConfig({ gemini }, { routing: { retry: { attempts: 0 } } }), transport);
    });
    afterEach(() => fake.reset());
    afterAll(async () => {
      await h.close();
      await fake.close();
    });

    it("one text: embedContent; the SDK's base64 decodes to Gemini's numbers; no usage made up", async () => {
      const reply = await h.openai.embeddings.create({ model: MODEL, input: "The quick brown fox" });
      expect(reply).toEqual({ object: "list", model: "gemini-embedding-001", data: [{ object: "embedding", index: 0, embedding: fakeVector("The quick brown fox") }] });
      const [sent] = fake.requests;
      expect(sent!.path).toBe("/v1beta/models/gemini-embedding-001:embedContent");
      expect(sent!.headers["x-goog-api-key"]).toBe(UPSTREAM_KEY);
      expect(sent!.body).toEqual({ content: { parts: [{ text: "The quick brown fox" }] } });
    });

    it("several texts: batchEmbedContents, each naming its model; dimensions as outputDimensionality", async () => {
      const reply = await h.openai.embeddings.create({ model: MODEL, input: ["alpha", "beta"], dimensions: 8, encoding_format: "float" });
      expect(reply.data.map((item) => item.embedding)).toEqual([fakeVector("alpha", 8), fakeVector("beta", 8)]);
      const [sent] = fake.requests;
      expect(sent!.path).toBe("/v1beta/models/gemini-embedding-001:batchEmbedContents");
      expect(sent!.body).toEqual({
        requests: [
          { model: "models/gemini-embedding-001", content: { parts: [{ text: "alpha" }] }, outputDimensionality: 8 },
          { model: "models/gemini-embedding-001", content: { parts: [{ text: "beta" }] }, outputDimensionality: 8 },
        ],
      });
    });

    it("more than 100 texts: batches of 100, one after the other, the vectors in input order", async () => {
      const texts = Array.from({ length: 150 }, (_, i) => `text ${i}`);
      const reply = await h.openai.embeddings.create({ model: MODEL, input: texts, encoding_format: "float" });
      expect(reply.data).toHaveLength(150);
      expect(reply.data[149]).toEqual({ object: "embedding", index: 149, embedding: fakeVector("text 149", FAKE_EMBEDDING_DIMENSIONS) });
      expect(fake.requests.map((request) => (request.body as { requests: unknown[] }).requests.length)).toEqual([100, 50]);
    });

    it("token ids are 400 before any call; a chat model is unsupported; Gemini's errors keep their status", async () => {
      expect(await failure(h.openai.embeddings.create({ model: MODEL, input: [15339, 1917] }))).toMatchObject({ status: 400, code: "unsupported_feature", param: "input" });
      expect(await failure(h.openai.embeddings.create({ model: "gemini/gemini-2.5-flash", input: "x" }))).toMatchObject({ status: 400, code: "unsupported_feature", param: "model" });
      expect(fake.requests).toHaveLength(0);
      fake.next({ error: { status: 429, message: "Resource has been exhausted (e.g. check quota).", retryAfter: "7" } });
      const limited = await failure(h.openai.embeddings.create({ model: MODEL, input: "x" }));
      expect(limited).toMatchObject({ status: 429, code: "rate_limit_exceeded" });
      expect(limited.headers?.get("retry-after")).toBe("7");
    });
  });
}
