/**
 * provider-openai's defaults for models it does not know, on OpenAI-compatible servers
 * (plugins/provider-openai/README.md, "Capability defaults"): `response_format` `json_schema`, as
 * LangChain's structured output sends it, reaches the server, and a `responses.provider` pointed at
 * such a server forwards `/v1/responses` without any `capabilities` in the config. What stays off is
 * still refused before the server is called.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./fixtures/fake-openai.ts";
import { startFakeOpenAIResponses, type FakeOpenAIResponses } from "./fixtures/fake-openai-responses.ts";
import { startHarness, testConfig, TRANSPORTS, type Harness } from "./helpers/harness.ts";

const schema = {
  type: "json_schema" as const,
  json_schema: { name: "city", strict: true, schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false } },
};

for (const transport of TRANSPORTS) {
  describe(`models provider-openai does not know (${transport})`, () => {
    let chatServer: FakeOpenAI;
    let responsesServer: FakeOpenAIResponses;
    let h: Harness;
    beforeAll(async () => {
      chatServer = await startFakeOpenAI();
      responsesServer = await startFakeOpenAIResponses();
      h = await startHarness(
        testConfig(
          {
            vllm: { plugin: "provider-openai", base_url: chatServer.url, models: ["Qwen/Qwen2.5-7B-Instruct"] },
            ollama: { plugin: "provider-openai", base_url: responsesServer.url, models: ["llama3.1:8b"] },
          },
          { responses: { provider: "ollama" }, routing: { retry: { attempts: 0 } } },
        ),
        transport,
      );
    });
    afterAll(async () => {
      await h?.close();
      await chatServer?.close();
      await responsesServer?.close();
    });

    it("send response_format json_schema on to the server", async () => {
      chatServer.reset();
      chatServer.setNext({ content: '{"city":"Paris"}' });
      const completion = await h.openai.chat.completions.create({
        model: "vllm/Qwen/Qwen2.5-7B-Instruct",
        messages: [{ role: "user", content: "Extract the city: I live in Paris." }],
        response_format: schema,
      });
      expect(completion.choices[0]!.message.content).toBe('{"city":"Paris"}');
      expect(chatServer.requests).toHaveLength(1);
      expect(chatServer.requests[0]!.body).toMatchObject({ model: "Qwen/Qwen2.5-7B-Instruct", response_format: schema });
    });

    it("are forwarded the responses API when their provider is responses.provider", async () => {
      responsesServer.reset();
      const response = await h.openai.responses.create({ model: "ollama/llama3.1:8b", input: "Say hello." });
      expect(response.object).toBe("response");
      expect(responsesServer.requests).toHaveLength(1);
      expect(responsesServer.requests[0]!.body).toMatchObject({ model: "llama3.1:8b", input: "Say hello." });
    });

    it("still have what some servers ignore without a word refused, before the server is called", async () => {
      chatServer.reset();
      const error = await h.openai.chat.completions
        .create({ model: "vllm/Qwen/Qwen2.5-7B-Instruct", messages: [{ role: "user", content: "hi" }], n: 2 })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error).toMatchObject({ code: "unsupported_feature", param: "n" });
      expect(chatServer.requests).toHaveLength(0);
    });
  });
}
