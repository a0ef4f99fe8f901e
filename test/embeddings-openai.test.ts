/**
 * Embeddings through provider-openai (docs/interface.md, "Embeddings"), end to end: the official
 * openai SDK's `embeddings.create` through the router (in-process and over node:http) to the fake
 * OpenAI upstream on 127.0.0.1, which answers `POST /v1/embeddings` in OpenAI's wire format. The
 * body goes on as the client sent it with the bare model; base64 and numbers come back either way;
 * the upstream's own 400 keeps its status. Then routing: a 503 retried, a provider that keeps
 * failing falling back, a reply with too few vectors moving on, and the access log's tokens.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../core/src/logger.ts";
import { fakeVector, FAKE_EMBEDDING_DIMENSIONS } from "./fixtures/fake-embeddings.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./fixtures/fake-openai.ts";
import { postJson, startHarness, testConfig, TRANSPORTS, type Harness } from "./helpers/harness.ts";
import { apiFailure } from "./helpers/api-failure.ts";


const UPSTREAM_KEY = "sk-upstream-embeddings-0123456789";
const MODEL = "openai/text-embedding-3-small";

const failure = apiFailure;

for (const transport of TRANSPORTS) {
  describe(`embeddings via provider-openai (${transport})`, () => {
    let fake: FakeOpenAI;
    let h: Harness;
    beforeAll(async () => {
      fake = await startFakeOpenAI({ apiKey: UPSTREAM_KEY });
      const openai = { plugin: "provider-openai", base_url: fake.url, api_key: UPSTREAM_KEY, models: ["text-embedding-3-small", "text-embedding-ada-002", "gpt-4o-mini"] };
      h = await startHarness(testConfig({ openai }, { routing: { retry: { attempts: 0 } } }), transport);
    });
    afterEach(() => fake.reset());
    afterAll(async () => {
      await h.close();
      await fake.close();
    });

    it("the SDK's default: base64 asked of the upstream, passed on, decoded to the upstream's numbers", async () => {
      const { data: reply, response } = await h.openai.embeddings.create({ model: MODEL, input: "The quick brown fox", user: "u-7" }).withResponse();
      expect(reply).toMatchObject({ object: "list", model: "text-embedding-3-small", usage: { prompt_tokens: 4, total_tokens: 4 } });
      expect(reply.data).toEqual([{ object: "embedding", index: 0, embedding: fakeVector("The quick brown fox") }]);
      expect(response.headers.get("x-modelmux-model")).toBe(MODEL);
      const [sent] = fake.requests;
      expect(sent!.path).toBe("/v1/embeddings");
      expect(sent!.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
      expect(sent!.headers["x-client-request-id"]).toBe(response.headers.get("x-request-id"));
      expect(sent!.body).toEqual({ model: "text-embedding-3-small", input: "The quick brown fox", user: "u-7", encoding_format: "base64" });
    });

    it("numbers when asked; texts, token ids and dimensions go on as sent", async () => {
      const texts = await h.openai.embeddings.create({ model: MODEL, input: ["alpha", "beta"], encoding_format: "float", dimensions: 8 });
      expect(texts.data.map((item) => item.embedding)).toEqual([fakeVector("alpha", 8), fakeVector("beta", 8)]);
      const tokens = await h.openai.embeddings.create({ model: MODEL, input: [[15339, 1917], [15339]], encoding_format: "float" });
      expect(tokens.data[0]!.embedding).toEqual(fakeVector([15339, 1917]));
      expect(tokens.data[1]!.embedding).toHaveLength(FAKE_EMBEDDING_DIMENSIONS);
      expect(fake.requests.map((request) => request.body)).toEqual([
        { model: "text-embedding-3-small", input: ["alpha", "beta"], encoding_format: "float", dimensions: 8 },
        { model: "text-embedding-3-small", input: [[15339, 1917], [15339]], encoding_format: "float" },
      ]);
    });

    it("the upstream's own 400 keeps its status and message; a chat model never reaches it", async () => {
      const refused = await failure(h.openai.embeddings.create({ model: "openai/text-embedding-ada-002", input: "x", dimensions: 8 }));
      expect(refused.status).toBe(400);
      expect(refused.message).toMatch(/openai: This model does not support specifying dimensions\./);
      const chat = await failure(h.openai.embeddings.create({ model: "openai/gpt-4o-mini", input: "x" }));
      expect(chat).toMatchObject({ status: 400, code: "unsupported_feature", param: "model" });
      expect(fake.requests).toHaveLength(1);
    });

    it("a reply that is not OpenAI's format is 502", async () => {
      fake.setNext({ raw: { body: "this is not JSON" } });
      expect(await failure(h.openai.embeddings.create({ model: MODEL, input: "x" }))).toMatchObject({ status: 502, code: "upstream_error" });
    });
  });
}

describe("embeddings: retries, fallbacks and the access log", () => {
  let primary: FakeOpenAI;
  let backup: FakeOpenAI;
  let h: Harness;
  const lines: string[] = [];
  const logger = createLogger({ level: "info", format: "json", write: (text) => lines.push(...text.split("\n").filter(Boolean)) });
  beforeAll(async () => {
    [primary, backup] = await Promise.all([startFakeOpenAI(), startFakeOpenAI()]);
    const block = (fake: FakeOpenAI) => ({ plugin: "provider-openai", base_url: fake.url, models: ["text-embedding-3-small"] });
    const config = testConfig(
      { primary: block(primary), backup: block(backup) },
      {
        routing: { retry: { attempts: 1, backoff: "5ms", max_backoff: "10ms" } },
        fallbacks: { "primary/text-embedding-3-small": ["backup/text-embedding-3-small"] },
        aliases: { vectors: "primary/text-embedding-3-small" },
      },
    );
    h = await startHarness(config, "http", { logger });
  });
  afterEach(() => {
    primary.reset();
    backup.reset();
  });
  afterAll(async () => {
    await h.close();
    await Promise.all([primary.close(), backup.close()]);
  });

  const embed = (input: unknown, requestId: string) => h.request("/v1/embeddings", postJson({ model: "vectors", input, encoding_format: "float" }, { "x-request-id": requestId }));

  it("retries a 503 on the same target", async () => {
    primary.setNext({ error: { status: 503 } });
    const res = await embed("again", "emb-retry");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-modelmux-model")).toBe("primary/text-embedding-3-small");
    expect(res.headers.get("x-modelmux-attempts")).toBe("2");
    expect((await res.json()).data[0].embedding).toEqual(fakeVector("again"));
  });

  it("falls back when the model keeps failing, and when its reply has too few vectors", async () => {
    primary.setNext({ error: { status: 503 } }, { error: { status: 503 } });
    const res = await embed(["one", "two"], "emb-fallback");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-modelmux-model")).toBe("backup/text-embedding-3-small");
    expect(res.headers.get("x-modelmux-attempts")).toBe("3");
    expect(backup.requests).toHaveLength(1);

    const oneVector = JSON.stringify({ object: "list", data: [{ object: "embedding", index: 0, embedding: [0.5] }], model: "text-embedding-3-small", usage: { prompt_tokens: 2, total_tokens: 2 } });
    primary.setNext({ raw: { body: oneVector } });
    const moved = await embed(["one", "two"], "emb-short");
    expect(moved.status).toBe(200);
    expect(moved.headers.get("x-modelmux-model")).toBe("backup/text-embedding-3-small");
    expect(primary.requests).toHaveLength(3);
  });

  it("logs the model as sent and served, and the reply's tokens", async () => {
    backup.setNext({ usage: { prompt_tokens: 9, completion_tokens: 0 } });
    primary.setNext({ error: { status: 503 } }, { error: { status: 503 } });
    expect((await embed("logged text", "emb-log")).status).toBe(200);
    let line: Record<string, unknown> | undefined;
    await expect
      .poll(() => {
        logger.flush();
        line = lines.map((text) => JSON.parse(text) as Record<string, unknown>).find((record) => record.request_id === "emb-log" && record.status !== undefined);
        return line !== undefined;
      })
      .toBe(true);
    expect(line).toMatchObject({ status: 200, outcome: "ok", requested_model: "vectors", model: "backup/text-embedding-3-small", prompt_tokens: 9, completion_tokens: 0, total_tokens: 9, app: "test-app" });
  });
});
