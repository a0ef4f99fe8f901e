import { describe, expect, it } from "vitest";
import { mapStopReason, parseMessageText, toChatCompletion, toUsage } from "../src/response.ts";

const CONTEXT = { provider: "anthropic", model: "claude-sonnet-4-5" };
const message = (extra: Record<string, unknown>) => ({
  id: "msg_01ABC",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5-20250929",
  content: [{ type: "text", text: "Hello." }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 10, output_tokens: 3 },
  ...extra,
});

describe("mapStopReason", () => {
  it.each([
    ["end_turn", "stop"],
    ["stop_sequence", "stop"],
    ["max_tokens", "length"],
    ["model_context_window_exceeded", "length"],
    ["tool_use", "tool_calls"],
    ["refusal", "content_filter"],
    ["pause_turn", "stop"],
    ["something_new", "stop"],
  ])("%s -> %s, with native_finish_reason kept", (native, finish) => {
    expect(mapStopReason(native)).toEqual({ finish_reason: finish, native_finish_reason: native });
  });

  it("reads a missing reason as stop, without a native reason", () => {
    expect(mapStopReason(null)).toEqual({ finish_reason: "stop" });
  });
});

describe("toUsage", () => {
  it("adds cache writes and reads into prompt_tokens and details them", () => {
    expect(toUsage({ input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 100, cache_read_input_tokens: 1000 })).toEqual({
      prompt_tokens: 1110,
      completion_tokens: 5,
      total_tokens: 1115,
      prompt_tokens_details: { cached_tokens: 1000, cache_creation_tokens: 100 },
    });
  });

  it("reads null cache counts as 0 and reports thinking tokens as reasoning_tokens", () => {
    expect(toUsage({ input_tokens: 4, output_tokens: 9, cache_creation_input_tokens: null, cache_read_input_tokens: null, output_tokens_details: { thinking_tokens: 6 } })).toEqual({
      prompt_tokens: 4,
      completion_tokens: 9,
      total_tokens: 13,
      prompt_tokens_details: { cached_tokens: 0, cache_creation_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 6 },
    });
  });
});

describe("toChatCompletion", () => {
  it("maps a text reply: Anthropic's id, the reply's model, now as created", () => {
    const before = Math.floor(Date.now() / 1000);
    const completion = toChatCompletion(message({}), CONTEXT);
    expect(completion).toEqual({
      id: "msg_01ABC",
      object: "chat.completion",
      created: expect.any(Number),
      model: "claude-sonnet-4-5-20250929",
      choices: [{ index: 0, finish_reason: "stop", native_finish_reason: "end_turn", message: { role: "assistant", content: "Hello." } }],
      usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13, prompt_tokens_details: { cached_tokens: 0, cache_creation_tokens: 0 } },
    });
    expect(completion.created).toBeGreaterThanOrEqual(before);
  });

  it("joins text blocks and leaves thinking blocks out", () => {
    const content = [
      { type: "thinking", thinking: "Let me think", signature: "sig" },
      { type: "redacted_thinking", data: "xx" },
      { type: "text", text: "Part one, " },
      { type: "text", text: "part two." },
    ];
    expect(toChatCompletion(message({ content }), CONTEXT).choices[0]?.message.content).toBe("Part one, part two.");
  });

  it("maps tool_use blocks to tool_calls with the input as JSON arguments, content null when there is no text", () => {
    const content = [
      { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
      { type: "tool_use", id: "toolu_2", name: "now", input: {} },
    ];
    const choice = toChatCompletion(message({ content, stop_reason: "tool_use" }), CONTEXT).choices[0];
    expect(choice).toEqual({
      index: 0,
      finish_reason: "tool_calls",
      native_finish_reason: "tool_use",
      message: {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "toolu_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
          { id: "toolu_2", type: "function", function: { name: "now", arguments: "{}" } },
        ],
      },
    });
  });

  it("keeps the text beside tool calls", () => {
    const content = [{ type: "text", text: "Let me check." }, { type: "tool_use", id: "toolu_1", name: "f", input: { a: 1 } }];
    const msg = toChatCompletion(message({ content, stop_reason: "tool_use" }), CONTEXT).choices[0]?.message;
    expect(msg?.content).toBe("Let me check.");
    expect(msg?.tool_calls).toHaveLength(1);
  });

  it("gives an empty string for an empty reply, and the requested model when the reply names none", () => {
    const completion = toChatCompletion(message({ content: [], model: undefined }), CONTEXT);
    expect(completion.choices[0]?.message.content).toBe("");
    expect(completion.model).toBe("claude-sonnet-4-5");
  });

  it("throws 502 for a body that is not a message", () => {
    expect(() => toChatCompletion({ type: "error", error: { type: "api_error", message: "x" } }, CONTEXT)).toThrow(expect.objectContaining({ status: 502, code: "upstream_error" }));
  });
});

describe("parseMessageText", () => {
  it("parses the JSON text", () => {
    expect(parseMessageText(JSON.stringify(message({})), CONTEXT).id).toBe("msg_01ABC");
  });

  it("throws 502 for text that is not JSON", () => {
    expect(() => parseMessageText("<html>Bad Gateway</html>", CONTEXT)).toThrow(expect.objectContaining({ status: 502, message: "anthropic: the reply is not valid JSON." }));
  });
});
