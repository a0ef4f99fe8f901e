/**
 * The same openai-SDK program, unchanged, against openai/…, anthropic/… and gemini/… models:
 * system prompt, multi-turn, an image, a tool call and its result, JSON and streamed; and the same
 * 400 from all three for a feature none of them has. Each provider's fake upstream speaks its own
 * wire format; the script is the conformance kit's provider-neutral one.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ConformanceUpstream } from "@modelmux/core/testing";
import { startFakeAnthropic } from "./fixtures/fake-anthropic.ts";
import { startFakeGemini } from "./fixtures/fake-gemini.ts";
import { startFakeOpenAIConformance } from "./fixtures/fake-openai.ts";
import { startHarness, testConfig, type Harness } from "./helpers/harness.ts";

const PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const tools: OpenAI.ChatCompletionTool[] = [
  {
    type: "function",
    function: { name: "get_weather", description: "Weather for a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
  },
];

/** The program a user writes once. */
async function program(client: OpenAI, model: string, upstream: ConformanceUpstream) {
  const messages: OpenAI.ChatCompletionMessageParam[] = [
    { role: "system", content: "You are terse." },
    { role: "user", content: "Hi" },
    { role: "assistant", content: "Hello." },
    {
      role: "user",
      content: [
        { type: "text", text: "What is in this picture, and what is the weather in Paris?" },
        { type: "image_url", image_url: { url: `data:image/png;base64,${PIXEL}` } },
      ],
    },
  ];
  upstream.next({ toolCall: { name: "get_weather", arguments: '{"city":"Paris"}' } });
  const first = await client.chat.completions.create({ model, messages, tools });
  const call = first.choices[0]!.message.tool_calls![0]!;
  upstream.next({ text: "A single pixel. It is sunny in Paris." });
  const toolTurn: OpenAI.ChatCompletionMessageParam[] = [
    ...messages,
    first.choices[0]!.message,
    { role: "tool", tool_call_id: call.id, content: '{"sky":"sunny","celsius":21}' },
  ];
  const answer = await client.chat.completions.create({ model, messages: toolTurn, tools });

  upstream.next({ toolCall: { name: "get_weather", arguments: '{"city":"Paris"}' } });
  const streamedCall = await client.chat.completions.stream({ model, messages, tools }).finalChatCompletion();
  upstream.next({ text: "A single pixel. It is sunny in Paris." });
  const streamedAnswer = await client.chat.completions.stream({ model, messages: toolTurn, tools, stream_options: { include_usage: true } }).finalChatCompletion();
  return { first, call, answer, streamedCall, streamedAnswer };
}

const PROVIDERS = [
  { name: "openai", plugin: "provider-openai", model: "gpt-4o-mini", start: startFakeOpenAIConformance },
  { name: "anthropic", plugin: "provider-anthropic", model: "claude-sonnet-4-5", start: startFakeAnthropic },
  { name: "gemini", plugin: "provider-gemini", model: "gemini-2.5-flash", start: startFakeGemini },
] as const;

describe("one openai-SDK program against every provider", () => {
  const upstreams = new Map<string, ConformanceUpstream>();
  let h: Harness;

  beforeAll(async () => {
    const providers: Parameters<typeof testConfig>[0] = {};
    for (const p of PROVIDERS) {
      const upstream = await p.start();
      upstreams.set(p.name, upstream);
      providers[p.name] = { plugin: p.plugin, models: [p.model], ...upstream.options };
    }
    h = await startHarness(testConfig(providers), "http");
  });
  beforeEach(() => upstreams.forEach((u) => u.reset()));
  afterAll(async () => {
    await h.close();
    await Promise.all([...upstreams.values()].map((u) => u.close()));
  });

  for (const p of PROVIDERS) {
    it(`runs unchanged against ${p.name}/${p.model}`, async () => {
      const upstream = upstreams.get(p.name)!;
      const r = await program(h.openai, `${p.name}/${p.model}`, upstream);
      expect(r.first.choices[0]!.finish_reason).toBe("tool_calls");
      expect(r.call.type === "function" && r.call.function.name).toBe("get_weather");
      expect(r.call.type === "function" && JSON.parse(r.call.function.arguments)).toEqual({ city: "Paris" });
      expect(r.answer.choices[0]!.message.content).toBe("A single pixel. It is sunny in Paris.");
      expect(r.answer.choices[0]!.finish_reason).toBe("stop");
      const streamed = r.streamedCall.choices[0]!.message.tool_calls![0]!;
      expect(streamed.type === "function" && JSON.parse(streamed.function.arguments)).toEqual({ city: "Paris" });
      expect(r.streamedAnswer.choices[0]!.message.content).toBe("A single pixel. It is sunny in Paris.");
      expect(r.streamedAnswer.usage!.total_tokens).toBeGreaterThan(0);

      // What reached the provider: four requests, each with the system prompt, the image and,
      // for the tool turn, the tool's result, in the provider's own format.
      expect(upstream.requests).toHaveLength(4);
      for (const request of upstream.requests) {
        const sent = JSON.stringify(request.body);
        expect(sent).toContain("You are terse.");
        expect(sent).toContain(PIXEL);
        expect(sent).toContain("get_weather");
      }
      expect(JSON.stringify(upstream.requests[1]!.body)).toContain("sunny");
      expect(JSON.stringify(upstream.requests[3]!.body)).toContain("sunny");
    });
  }

  it("refuses a feature none of them has with the same 400 from all three, before any upstream call", async () => {
    const errors = [];
    for (const p of PROVIDERS) {
      const error = (await h.openai.chat.completions
        .create({ model: `${p.name}/${p.model}`, messages: [{ role: "user", content: "hi" }], modalities: ["text", "audio"], audio: { voice: "alloy", format: "wav" } })
        .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.BadRequestError>;
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      errors.push({ status: error.status, type: error.type, code: error.code, param: error.param, message: error.message.replace(`${p.name}/${p.model}`, "<model>").replaceAll(`providers.${p.name}`, "providers.<name>") });
    }
    expect(errors[1]).toEqual(errors[0]);
    expect(errors[2]).toEqual(errors[0]);
    expect(errors[0]).toMatchObject({ status: 400, code: "unsupported_feature", param: "modalities" });
    for (const upstream of upstreams.values()) expect(upstream.requests).toHaveLength(0);
  });
});
