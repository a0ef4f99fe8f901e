/**
 * provider-anthropic hands the core its text and tool-argument deltas as chunk objects with their
 * JSON text (`withRawJson`): the client reads the text, the stream check and `store: true` read the
 * object. End to end, the official openai SDK → modelmux → provider-anthropic → a fake Anthropic
 * upstream on 127.0.0.1: what the client streamed and what was stored are the same answer, for
 * text that needs escapes, multi-byte characters, long deltas and a tool call streamed in fragments.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeAnthropic, type FakeAnthropic } from "./fixtures/fake-anthropic.ts";
import { postJson, readSse, startHarness, testConfig, TRANSPORTS, type Harness } from "./helpers/harness.ts";

const MODEL = "anthropic/claude-sonnet-4-5";
/** Sent as one text delta per word: short and long ones, escapes, characters past ASCII, a separator JSON does not escape. */
const TEXT = 'Quote " and backslash \\ then\ttab, newline\n, é, 🙂, \u2028 and a-delta-longer-than-thirteen-characters, then the end.';
const ARGUMENTS = '{"city":"Paris \\"FR\\"","note":"café 🙂","days":[1,2,3]}';

interface Chunk {
  id: string;
  choices: { index: number; delta: { content?: string | null; tool_calls?: { index: number; function?: { arguments?: string } }[] }; finish_reason: string | null }[];
}

for (const transport of TRANSPORTS) {
  describe(`a streamed anthropic reply, stored (${transport})`, () => {
    let fake: FakeAnthropic;
    let h: Harness;

    beforeAll(async () => {
      fake = await startFakeAnthropic();
      h = await startHarness(
        testConfig({ anthropic: { plugin: "provider-anthropic", models: ["claude-sonnet-4-5"], capabilities: { tools: true }, ...fake.options } }, { storage: { plugin: "storage-unstorage", options: { driver: "memory" } } }),
        transport,
      );
    });
    afterAll(async () => {
      await h.close();
      await fake.close();
    });

    it("streams each delta as canonical JSON, and stores the answer the client read", async () => {
      fake.next({ text: TEXT, toolCall: { id: "toolu_1", name: "get_weather", arguments: ARGUMENTS }, usage: { input: 9, output: 30 } });
      const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }];
      const res = await h.request("/v1/chat/completions", postJson({ model: MODEL, stream: true, store: true, tools, messages: [{ role: "user", content: "Weather?" }] }));
      expect(res.status).toBe(200);
      const data = await readSse(res);
      expect(data.at(-1)).toBe("[DONE]");
      const chunks = data.slice(0, -1).map((text) => JSON.parse(text) as Chunk);
      // Every event is the canonical serialisation of what it says, whichever way it was made.
      for (const [i, chunk] of chunks.entries()) expect(data[i]).toBe(JSON.stringify(chunk));
      const deltas = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.delta));
      const streamed = deltas.map((delta) => delta.content ?? "").join("");
      const args = deltas.flatMap((delta) => delta.tool_calls ?? []).map((call) => call.function?.arguments ?? "").join("");
      expect(streamed).toBe(TEXT);
      expect(args).toBe(JSON.stringify(JSON.parse(ARGUMENTS)));
      expect(chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.finish_reason)).filter(Boolean)).toEqual(["tool_calls"]);

      const stored = await h.openai.chat.completions.retrieve(chunks[0]!.id);
      expect(stored.choices[0]!.message.content).toBe(streamed);
      expect(stored.choices[0]!.message.tool_calls).toEqual([{ id: "toolu_1", type: "function", function: { name: "get_weather", arguments: args } }]);
      expect(stored.choices[0]!.finish_reason).toBe("tool_calls");
      expect(stored.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 30 });
    });
  });
}
