/**
 * The offline path a new user takes first: the openai SDK against the echo provider, with no keys,
 * in-process and over a real port.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postJson, readSse, startHarness, testConfig, TRANSPORTS, type Harness } from "./helpers/harness.ts";

for (const transport of TRANSPORTS) {
  describe(`chat completions via provider-echo (${transport})`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await startHarness(testConfig({ echo: { plugin: "provider-echo", models: ["echo-1"] } }), transport);
    });
    afterAll(() => h.close());

    it("lists the model with the interface's fields and OpenAI's", async () => {
      const page = await h.openai.models.list();
      expect(page.data).toHaveLength(1);
      expect(page.data[0]).toMatchObject({ id: "echo/echo-1", object: "model", owned_by: "echo", model_name: "echo-1", model_provider: "echo", modelmux_model_id: 1 });
      const raw = (await (await h.request("/v1/models", { headers: { authorization: `Bearer ${h.openai.apiKey}` } })).json()) as Record<string, unknown>;
      expect(raw).toMatchObject({ first_id: "echo/echo-1", last_id: "echo/echo-1", has_more: false });
      expect(raw).not.toHaveProperty("object");
      expect(Date.parse((raw.data as Array<{ created_at: string }>)[0]!.created_at)).not.toBeNaN();
    });

    it("echoes the last user message, JSON and streamed, with the same text", async () => {
      const messages: OpenAI.ChatCompletionMessageParam[] = [
        { role: "user", content: "first" },
        { role: "assistant", content: "ok" },
        { role: "user", content: "Hello, router" },
      ];
      const json = await h.openai.chat.completions.create({ model: "echo/echo-1", messages });
      expect(json.choices[0]!.message.content).toBe("Hello, router");
      const stream = await h.openai.chat.completions.create({ model: "echo/echo-1", messages, stream: true, stream_options: { include_usage: true } });
      let text = "";
      let contentChunks = 0;
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta.content) contentChunks++;
        text += chunk.choices[0]?.delta.content ?? "";
        usage = chunk.usage ?? usage;
      }
      expect(text).toBe("Hello, router");
      expect(contentChunks).toBeGreaterThan(1);
      expect(usage).toEqual(json.usage);
    });

    it("answers with a tool call the SDK can run, then uses its result", async () => {
      const tools: OpenAI.ChatCompletionTool[] = [
        { type: "function", function: { name: "lookup", parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] } } },
      ];
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "please call lookup" }];
      const final = await h.openai.chat.completions.stream({ model: "echo/echo-1", messages, tools }).finalChatCompletion();
      const call = final.choices[0]!.message.tool_calls![0]!;
      expect(final.choices[0]!.finish_reason).toBe("tool_calls");
      expect(call.type === "function" && JSON.parse(call.function.arguments)).toHaveProperty("query");
      const next = await h.openai.chat.completions.create({
        model: "echo/echo-1",
        tools,
        messages: [...messages, final.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: "42" }],
      });
      expect(next.choices[0]!.message.content).toContain("42");
    });

    it("streams raw SSE ending in [DONE] with x-request-id", async () => {
      const res = await h.request("/v1/chat/completions", postJson({ model: "echo/echo-1", stream: true, messages: [{ role: "user", content: "raw" }] }));
      expect(res.headers.get("x-request-id")).toBeTruthy();
      expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
      const events = await readSse(res);
      expect(events.at(-1)).toBe("[DONE]");
      const chunks = events.slice(0, -1).map((e) => JSON.parse(e) as OpenAI.ChatCompletionChunk);
      expect(chunks.every((c) => c.object === "chat.completion.chunk" && c.id === chunks[0]!.id)).toBe(true);
    });
  });
}
