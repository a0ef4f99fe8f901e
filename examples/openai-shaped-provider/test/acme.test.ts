/**
 * The ~30-line provider made with the provider kit, end to end: the official openai SDK → modelmux
 * (`createRouter`) → this plugin → a fake upstream on 127.0.0.1 that speaks OpenAI's wire format.
 * Every case runs in-process (fetch handler) and over a real port.
 */
import { APIError } from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "../../../test/fixtures/fake-openai.ts";
import { startHarness, testConfig, TRANSPORTS, type Harness } from "../../../test/helpers/harness.ts";
import acme from "../src/index.ts";

const KEY = "acme-live-key-0123456789";

for (const transport of TRANSPORTS) {
  describe(`a provider made with defineOpenAIShapedProvider (${transport})`, () => {
    let fake: FakeOpenAI;
    let h: Harness;

    beforeAll(async () => {
      fake = await startFakeOpenAI({ apiKey: KEY });
      const acmeBlock = { plugin: "provider-acme", base_url: `${fake.url}/`, api_key: KEY, models: ["acme-1", "acme-vision-2"] };
      h = await startHarness(testConfig({ acme: acmeBlock }), transport, { plugins: { "provider-acme": acme } });
    });
    afterEach(() => fake.reset());
    afterAll(async () => {
      await h.close();
      await fake.close();
    });

    it("answers a JSON completion, sending the bare model, the key as a bearer token and the request id", async () => {
      const reply = await h.openai.chat.completions.create({ model: "acme/acme-1", messages: [{ role: "user", content: "Hello Acme" }], temperature: null });
      expect(reply.choices[0]!.message.content).toBe("Echo: Hello Acme");
      expect(reply.usage!.total_tokens).toBeGreaterThan(0);
      const sent = fake.requests[0]!;
      expect(sent.path).toBe("/v1/chat/completions");
      expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(sent.headers["x-request-id"]).toMatch(/.+/);
      expect(sent.body).toMatchObject({ model: "acme-1", stream: false });
      expect(sent.body).not.toHaveProperty("temperature");
    });

    it("streams, the core relaying the upstream's chunks and its usage", async () => {
      const stream = await h.openai.chat.completions.create({ model: "acme/acme-1", messages: [{ role: "user", content: "one two three" }], stream: true, stream_options: { include_usage: true } });
      let text = "";
      let finish: string | null = null;
      let usage: unknown;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? "";
        finish = chunk.choices[0]?.finish_reason ?? finish;
        usage = chunk.usage ?? usage;
      }
      expect(text).toBe("Echo: one two three");
      expect(finish).toBe("stop");
      expect(usage).toMatchObject({ total_tokens: expect.any(Number) });
      expect(fake.requests[0]!.headers.accept).toBe("text/event-stream");
    });

    it("takes its capabilities from the table: vision for acme-vision-*, refused by the core elsewhere", async () => {
      const image = { type: "image_url" as const, image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } };
      const seen = await h.openai.chat.completions.create({ model: "acme/acme-vision-2", messages: [{ role: "user", content: [image] }] });
      expect(seen.object).toBe("chat.completion");
      const refused = await h.openai.chat.completions.create({ model: "acme/acme-1", messages: [{ role: "user", content: [image] }] }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(APIError);
      expect(refused).toMatchObject({ status: 400 });
      expect(fake.requests).toHaveLength(1);
    });

    it("passes an upstream error on with its status and message, the key removed", async () => {
      fake.setNext({ error: { status: 401, message: `Incorrect API key provided: ${KEY}`, code: "invalid_api_key" } });
      const error = await h.openai.chat.completions.create({ model: "acme/acme-1", messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 401, code: "invalid_api_key" });
      expect((error as APIError).message).toContain("acme: Incorrect API key provided: [redacted]");
      expect((error as APIError).message).not.toContain(KEY);
    });
  });
}
