import { describe, expect, it } from "vitest";
import { createCompletionAssembler } from "../src/chat/assemble-completion.ts";
import type { ChatCompletionChunk } from "../src/types/chat.ts";

const LIMIT = 64 * 1024 * 1024;
const base = { id: "chatcmpl-1", object: "chat.completion.chunk" as const, created: 100, model: "m" };
const chunk = (choices: ChatCompletionChunk["choices"], extra: Partial<ChatCompletionChunk> = {}): ChatCompletionChunk => ({ ...base, choices, ...extra });

describe("createCompletionAssembler", () => {
  it("joins content per choice, keeps finish reasons, and takes usage from the usage chunk", () => {
    const a = createCompletionAssembler("p", LIMIT);
    a.add(chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]));
    a.add(chunk([{ index: 1, delta: { content: "B" }, finish_reason: null }]));
    a.add(JSON.parse(JSON.stringify(chunk([{ index: 0, delta: { content: "Hel" }, finish_reason: null }]))) as ChatCompletionChunk);
    a.add(chunk([{ index: 0, delta: { content: "lo" }, finish_reason: null }]));
    a.add(chunk([{ index: 0, delta: {}, finish_reason: "length", native_finish_reason: "max_tokens" }]));
    a.add(chunk([{ index: 1, delta: {}, finish_reason: "stop" }]));
    a.add(chunk([], { usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } }));
    expect(a.completion()).toEqual({
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 100,
      model: "m",
      choices: [
        { index: 0, finish_reason: "length", native_finish_reason: "max_tokens", message: { role: "assistant", content: "Hello" } },
        { index: 1, finish_reason: "stop", message: { role: "assistant", content: "B" } },
      ],
      usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
    });
  });

  it("reassembles tool calls from their deltas, with null content", () => {
    const a = createCompletionAssembler("p", LIMIT);
    a.add(chunk([{ index: 0, delta: { role: "assistant", content: null, tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: "" } }] }, finish_reason: null }]));
    a.add(chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }, finish_reason: null }]));
    a.add(chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }, finish_reason: null }]));
    a.add(chunk([{ index: 0, delta: { tool_calls: [{ index: 1, id: "call_2", type: "function", function: { name: "now", arguments: "{}" } }] }, finish_reason: "tool_calls" }]));
    const message = a.completion().choices[0]!.message;
    expect(message.content).toBeNull();
    expect(message.tool_calls).toEqual([
      { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
      { id: "call_2", type: "function", function: { name: "now", arguments: "{}" } },
    ]);
  });

  it("invents nothing: no usage when the upstream reported none, and a choice without its finish reason is a 502", () => {
    const a = createCompletionAssembler("p", LIMIT);
    a.add(chunk([{ index: 0, delta: { role: "assistant", content: "Hi" }, finish_reason: null }]));
    a.add(chunk([{ index: 0, delta: {}, finish_reason: "stop" }]));
    const completion = a.completion();
    expect(completion).not.toHaveProperty("usage");
    expect(completion.choices[0]).toEqual({ index: 0, finish_reason: "stop", message: { role: "assistant", content: "Hi" } });

    const cut = createCompletionAssembler("p", LIMIT);
    cut.add(chunk([{ index: 0, delta: { content: "Hel" }, finish_reason: null }]));
    cut.add(chunk([], { usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
    expect(() => cut.completion()).toThrow(expect.objectContaining({ status: 502, code: "upstream_error", message: "p: the upstream stream ended before the answer was complete (no finish_reason)." }));
    expect(() => createCompletionAssembler("p", LIMIT).completion()).toThrow(expect.objectContaining({ status: 502 }));
  });

  it.each([
    '{"choices":[{"index":0,"delta":"x"}]}',
    '{"choices":[{"index":0,"delta":{"tool_calls":{}}}]}',
    '{"choices":[{"index":0,"delta":{"tool_calls":[1]}}]}',
    '{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{}}]}}]}',
    '{"choices":[{"index":0,"delta":{"tool_calls":[{"index":-1}]}}]}',
    '{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1025}]}}]}',
    '{"choices":[{"index":0,"delta":{"tool_calls":[{"index":4294967294,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]}}]}',
  ])("is a 502, not a bug, for the chunk %s (which passed the stream check)", (text) => {
    const a = createCompletionAssembler("p", LIMIT);
    expect(() => a.add(JSON.parse(text) as ChatCompletionChunk)).toThrow(expect.objectContaining({ status: 502, code: "upstream_error", message: "p: the upstream sent a stream event that is not a chat.completion.chunk." }));
  });

  it("keeps tool calls by index, in index order, whatever order and gaps they come in", () => {
    const a = createCompletionAssembler("p", LIMIT);
    const call = (index: number, name: string) => ({ index, id: `call_${index}`, type: "function" as const, function: { name, arguments: "{}" } });
    a.add(chunk([{ index: 0, delta: { tool_calls: [call(1024, "last"), call(3, "middle")] }, finish_reason: null }]));
    a.add(chunk([{ index: 0, delta: { tool_calls: [call(0, "first")] }, finish_reason: "tool_calls" }]));
    expect(a.completion().choices[0]!.message.tool_calls!.map((c) => c.function.name)).toEqual(["first", "middle", "last"]);
  });

  it("is a 502 naming server.upstream_body_limit once the answer it keeps passes the limit", () => {
    const a = createCompletionAssembler("p", 10);
    a.add(chunk([{ index: 0, delta: { content: "12345" }, finish_reason: null }]));
    expect(() => a.add(chunk([{ index: 0, delta: { tool_calls: [{ index: 0, id: "c", function: { name: "f", arguments: "{\"a\":1}" } }] }, finish_reason: null }]))).toThrow(
      expect.objectContaining({ status: 502, code: "upstream_error", message: expect.stringContaining("limit of 10 characters (server.upstream_body_limit)") }),
    );
  });
});
