import { describe, expect, it } from "vitest";
import { createCompletionAssembler } from "../src/chat/assemble-completion.ts";
import type { ChatCompletionChunk } from "../src/types/chat.ts";

const base = { id: "chatcmpl-1", object: "chat.completion.chunk" as const, created: 100, model: "m" };
const chunk = (choices: ChatCompletionChunk["choices"], extra: Partial<ChatCompletionChunk> = {}): ChatCompletionChunk => ({ ...base, choices, ...extra });

describe("createCompletionAssembler", () => {
  it("joins content per choice, keeps finish reasons, and takes usage from the usage chunk", () => {
    const a = createCompletionAssembler("p");
    a.add(chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]));
    a.add(chunk([{ index: 1, delta: { content: "B" }, finish_reason: null }]));
    a.add(JSON.stringify(chunk([{ index: 0, delta: { content: "Hel" }, finish_reason: null }])));
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
    const a = createCompletionAssembler("p");
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
    const a = createCompletionAssembler("p");
    a.add(chunk([{ index: 0, delta: { role: "assistant", content: "Hi" }, finish_reason: null }]));
    a.add(chunk([{ index: 0, delta: {}, finish_reason: "stop" }]));
    const completion = a.completion();
    expect(completion).not.toHaveProperty("usage");
    expect(completion.choices[0]).toEqual({ index: 0, finish_reason: "stop", message: { role: "assistant", content: "Hi" } });

    const cut = createCompletionAssembler("p");
    cut.add(chunk([{ index: 0, delta: { content: "Hel" }, finish_reason: null }]));
    cut.add(chunk([], { usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
    expect(() => cut.completion()).toThrow(expect.objectContaining({ status: 502, code: "upstream_error", message: "p: the upstream stream ended before the answer was complete (no finish_reason)." }));
    expect(() => createCompletionAssembler("p").completion()).toThrow(expect.objectContaining({ status: 502 }));
  });

  it.each([
    "not json",
    "null",
    '{"foo":1}',
    '{"choices":[{"index":0,"delta":{}}',
    '{"choices":5}',
    '{"choices":[1]}',
    '{"choices":[{"delta":{}}]}',
    '{"choices":[{"index":0,"delta":"x"}]}',
    '{"choices":[{"index":0,"delta":{"tool_calls":{}}}]}',
    '{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{}}]}}]}',
    // Stored as a value: nested past 256 levels, serialising it would overflow the stack.
    `{"choices":[],"usage":{"prompt_tokens_details":{"a":${"[".repeat(300)}${"]".repeat(300)}}}}`,
  ])("is a 502, not a bug, for the chunk %s", (text) => {
    const a = createCompletionAssembler("p");
    expect(() => a.add(text)).toThrow(expect.objectContaining({ status: 502, code: "upstream_error", message: "p: the upstream sent a stream event that is not a chat.completion.chunk." }));
  });
});
