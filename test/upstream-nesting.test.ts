/**
 * An upstream whose reply nests JSON thousands of levels deep, through a real router on 127.0.0.1
 * (and in-process): the reply parses, but serialising any of it again (a tool call's arguments, the
 * completion, the stored copy) would overflow the stack. It is the provider's failure: 502
 * `upstream_error` naming the limit, or the stream's error event; never a 500, nothing stored. A
 * reply nested within the limit goes through.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startFakeAnthropic, type FakeAnthropic } from "./fixtures/fake-anthropic.ts";
import { startFakeGemini, type FakeGemini } from "./fixtures/fake-gemini.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./fixtures/fake-openai.ts";
import { postJson, readSse, startHarness, TEST_KEY, testConfig, TRANSPORTS, type Harness } from "./helpers/harness.ts";

const UPSTREAM_KEY = "sk-upstream-secret-123";
const MAX_UPSTREAM_DEPTH = 256;
const messages = [{ role: "user", content: "hi" }];

/** JSON text of arrays nested `levels` deep. */
const nested = (levels: number) => "[".repeat(levels) + "]".repeat(levels);
const DEEP = nested(100_000);

interface Envelope {
  error: { message: string; type: string; code: string | null; param: string | null };
}

/** An Anthropic message whose one block is a call of `f` with `input` (JSON text). */
const anthropicToolUse = (input: string) =>
  `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":${input}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`;

/** A Gemini response whose one part is a call of `f` with `args` (JSON text). */
const geminiCall = (args: string) =>
  `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","args":${args}}}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1,"totalTokenCount":2},"modelVersion":"gemini-2.5-flash","responseId":"r1"}`;

/** An OpenAI chat completion with `message` (JSON text of the message's other fields) and `usage` fields. */
const openaiCompletion = (id: string, message: string, usage = "") =>
  `{"id":"${id}","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi"${message}}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2${usage}}}`;

for (const transport of TRANSPORTS) {
  describe(`an upstream reply nested too deeply (${transport})`, () => {
    let openai: FakeOpenAI;
    let anthropic: FakeAnthropic;
    let gemini: FakeGemini;
    let h: Harness;

    beforeAll(async () => {
      openai = await startFakeOpenAI({ apiKey: UPSTREAM_KEY });
      anthropic = await startFakeAnthropic();
      gemini = await startFakeGemini();
      h = await startHarness(
        testConfig(
          {
            openai: { plugin: "provider-openai", base_url: openai.url, api_key: UPSTREAM_KEY, models: ["gpt-4o-mini"] },
            anthropic: { plugin: "provider-anthropic", models: ["claude-sonnet-4-5"], ...anthropic.options },
            gemini: { plugin: "provider-gemini", models: ["gemini-2.5-flash"], ...gemini.options },
          },
          { storage: { plugin: "storage-unstorage", options: { driver: "memory" } } },
        ),
        transport,
      );
    });
    afterEach(() => {
      openai.reset();
      anthropic.reset();
      gemini.reset();
    });
    afterAll(async () => {
      await h.close();
      await Promise.all([openai.close(), anthropic.close(), gemini.close()]);
    });

    async function expectUpstreamError(body: Record<string, unknown>, provider: string): Promise<void> {
      const res = await h.request("/v1/chat/completions", postJson(body));
      const envelope = (await res.json()) as Envelope;
      expect(res.status, JSON.stringify(envelope)).toBe(502);
      expect(envelope.error).toMatchObject({ type: "api_error", code: "upstream_error" });
      expect(envelope.error.message).toMatch(new RegExp(`^${provider}: the reply nests objects and arrays more than ${MAX_UPSTREAM_DEPTH} levels deep \\(at .+\\)\\.$`));
      expect(envelope.error.message.length).toBeLessThan(300);
    }

    async function storedIds(): Promise<string[]> {
      const res = await h.request("/v1/chat/completions?limit=100", { headers: { authorization: `Bearer ${TEST_KEY}` } });
      return ((await res.json()) as { data: { id: string }[] }).data.map((c) => c.id);
    }

    it("a tool call's input or args nested 100,000 deep (Anthropic, Gemini, OpenAI-compatible) is a 502", async () => {
      anthropic.next({ raw: { body: anthropicToolUse(`{"a":${DEEP}}`) } });
      await expectUpstreamError({ model: "anthropic/claude-sonnet-4-5", messages }, "anthropic");
      gemini.next({ raw: { body: geminiCall(`{"a":${DEEP}}`) } });
      await expectUpstreamError({ model: "gemini/gemini-2.5-flash", messages }, "gemini");
      // Some compatible servers send the arguments as an object.
      openai.setNext({ raw: { body: openaiCompletion("c1", `,"tool_calls":[{"id":"t","type":"function","function":{"name":"f","arguments":{"a":${DEEP}}}}]`) } });
      await expectUpstreamError({ model: "openai/gpt-4o-mini", messages }, "openai");
      expect((await h.request("/healthz")).status).toBe(200);
    });

    it("a deep field the router passes on (annotations, usage details) is a 502, also with store: true; nothing is stored", async () => {
      openai.setNext({ raw: { body: openaiCompletion("c2", `,"annotations":${DEEP},"extra":1`) } });
      await expectUpstreamError({ model: "openai/gpt-4o-mini", messages }, "openai");
      openai.setNext({ raw: { body: openaiCompletion("c3", "", `,"prompt_tokens_details":{"a":${DEEP}}`) } });
      await expectUpstreamError({ model: "openai/gpt-4o-mini", messages, store: true }, "openai");
      expect(await storedIds()).toEqual([]);
    });

    it("a stored stream whose event nests too deeply ends with the upstream error event; nothing is stored", async () => {
      const chunk = (delta: string, finish: string | null, usage = "") =>
        `data: {"id":"s1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":${delta},"finish_reason":${finish}}]${usage}}\n\n`;
      const usage = `,"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2,"prompt_tokens_details":{"a":${DEEP}}}`;
      openai.setNext({ raw: { body: chunk('{"role":"assistant","content":"hi"}', null) + chunk("{}", '"stop"', usage) + "data: [DONE]\n\n", contentType: "text/event-stream" } });
      const res = await h.request("/v1/chat/completions", postJson({ model: "openai/gpt-4o-mini", messages, stream: true, store: true }));
      const data = await readSse(res);
      expect((JSON.parse(data.at(-1)!) as Envelope).error).toMatchObject({ code: "upstream_error" });
      expect(await storedIds()).toEqual([]);
    });

    it("streamed tool calls nested too deeply (Anthropic, Gemini) end with the upstream error event", async () => {
      const start = { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } };
      const events = [
        `event: message_start\ndata: ${JSON.stringify(start)}\n\n`,
        `event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{"a":${DEEP}}}}\n\n`,
        'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
        'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":1}}\n\n',
        'event: message_stop\ndata: {"type":"message_stop"}\n\n',
      ];
      anthropic.next({ raw: { body: events.join(""), contentType: "text/event-stream" } });
      gemini.next({ raw: { body: `data: ${geminiCall(`{"a":${DEEP}}`)}\r\n\r\n`, contentType: "text/event-stream" } });
      for (const model of ["anthropic/claude-sonnet-4-5", "gemini/gemini-2.5-flash"]) {
        const res = await h.request("/v1/chat/completions", postJson({ model, messages, stream: true }));
        const text = await res.text();
        expect(text.length, model).toBeLessThan(10_000);
        if (res.status === 200) expect(text).toMatch(/data: \{"error":\{[^\n]*"code":"upstream_error"/);
        else expect(((JSON.parse(text) as Envelope).error.code)).toBe("upstream_error");
      }
    });

    it(`a reply nested within ${MAX_UPSTREAM_DEPTH} levels goes through`, async () => {
      const args = `{"a":${nested(200)}}`;
      gemini.next({ raw: { body: geminiCall(args) } });
      const reply = await h.openai.chat.completions.create({ model: "gemini/gemini-2.5-flash", messages: [{ role: "user", content: "hi" }] });
      const call = reply.choices[0]!.message.tool_calls![0]!;
      expect(call.type === "function" && call.function.arguments).toBe(args);
      anthropic.next({ raw: { body: anthropicToolUse(args) } });
      const viaAnthropic = await h.openai.chat.completions.create({ model: "anthropic/claude-sonnet-4-5", messages: [{ role: "user", content: "hi" }] });
      const anthropicCall = viaAnthropic.choices[0]!.message.tool_calls![0]!;
      expect(anthropicCall.type === "function" && anthropicCall.function.arguments).toBe(args);
    });
  });
}
