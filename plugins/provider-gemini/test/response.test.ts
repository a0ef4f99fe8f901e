import { describe, expect, it } from "vitest";
import { mapFinishReason, mapUsage, parseCompletionText, toChatCompletion, toolCallId } from "../src/response.ts";

const context = { provider: "gemini", model: "gemini-2.5-flash" };
const text = (t: string, extra: object = {}) => ({ text: t, ...extra });

describe("toChatCompletion", () => {
  it("maps a text reply: id from responseId, model from modelVersion, usage", () => {
    const completion = toChatCompletion(
      {
        candidates: [{ content: { role: "model", parts: [text("Hello "), text("there.")] }, finishReason: "STOP", index: 0 }],
        usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 3, totalTokenCount: 7 },
        modelVersion: "gemini-2.5-flash-001",
        responseId: "abc123",
      },
      context,
    );
    expect(completion).toMatchObject({
      id: "chatcmpl-abc123",
      object: "chat.completion",
      model: "gemini-2.5-flash-001",
      choices: [{ index: 0, finish_reason: "stop", native_finish_reason: "STOP", message: { role: "assistant", content: "Hello there." } }],
      usage: { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 },
    });
    expect(Number.isInteger(completion.created)).toBe(true);
    expect(Math.abs(completion.created - Date.now() / 1000)).toBeLessThan(5);
  });

  it("falls back to a generated id, the requested model and createTime", () => {
    const completion = toChatCompletion({ candidates: [{ content: { parts: [text("x")] }, finishReason: "STOP" }], createTime: "2025-01-02T03:04:05Z" }, context);
    expect(completion.id).toMatch(/^chatcmpl-[0-9a-f-]{36}$/);
    expect(completion.model).toBe("gemini-2.5-flash");
    expect(completion.created).toBe(Date.UTC(2025, 0, 2, 3, 4, 5) / 1000);
  });

  it("leaves thought parts out of the content", () => {
    const completion = toChatCompletion({ candidates: [{ content: { parts: [text("Let me think…", { thought: true }), text("42")] }, finishReason: "STOP" }] }, context);
    expect(completion.choices[0]!.message.content).toBe("42");
  });

  it("maps function calls to tool calls, with Gemini's id or a stable generated one", () => {
    const reply = {
      responseId: "r1",
      candidates: [
        {
          content: { parts: [text("Checking."), { functionCall: { name: "get_weather", args: { city: "Paris" } } }, { functionCall: { id: "fc-9", name: "get_time", args: {} } }] },
          finishReason: "STOP",
        },
      ],
    };
    const first = toChatCompletion(reply, context).choices[0]!;
    expect(first.finish_reason).toBe("tool_calls");
    expect(first.native_finish_reason).toBe("STOP");
    expect(first.message.content).toBe("Checking.");
    expect(first.message.tool_calls).toEqual([
      { id: toolCallId("r1", 0, 0, { name: "get_weather", args: { city: "Paris" } }), type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
      { id: "fc-9", type: "function", function: { name: "get_time", arguments: "{}" } },
    ]);
    expect(first.message.tool_calls![0]!.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(toChatCompletion(reply, context).choices[0]!.message.tool_calls![0]!.id).toBe(first.message.tool_calls![0]!.id);
    expect(toChatCompletion({ ...reply, responseId: "r2" }, context).choices[0]!.message.tool_calls![0]!.id).not.toBe(first.message.tool_calls![0]!.id);
  });

  it("maps one choice per candidate, by the candidate's index", () => {
    const completion = toChatCompletion(
      {
        candidates: [
          { content: { parts: [text("b")] }, finishReason: "STOP", index: 1 },
          { content: { parts: [text("a")] }, finishReason: "MAX_TOKENS", index: 0 },
        ],
      },
      context,
    );
    expect(completion.choices.map((c) => [c.index, c.message.content, c.finish_reason])).toEqual([
      [1, "b", "stop"],
      [0, "a", "length"],
    ]);
  });

  it("maps a candidate stopped by safety to content_filter with no content", () => {
    const completion = toChatCompletion({ candidates: [{ finishReason: "SAFETY", index: 0, safetyRatings: [{ category: "HARM_CATEGORY_HARASSMENT", probability: "HIGH", blocked: true }] }] }, context);
    expect(completion.choices[0]).toMatchObject({ finish_reason: "content_filter", native_finish_reason: "SAFETY", message: { content: null } });
  });

  it("maps a blocked prompt to one content_filter choice", () => {
    const completion = toChatCompletion({ promptFeedback: { blockReason: "PROHIBITED_CONTENT" }, usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 } }, context);
    expect(completion.choices).toEqual([{ index: 0, finish_reason: "content_filter", native_finish_reason: "PROHIBITED_CONTENT", message: { role: "assistant", content: null } }]);
    expect(completion.usage).toEqual({ prompt_tokens: 5, completion_tokens: 0, total_tokens: 5 });
    const two = toChatCompletion({ promptFeedback: { blockReason: "PROHIBITED_CONTENT" } }, { ...context, choices: 2 });
    expect(two.choices.map((c) => [c.index, c.finish_reason])).toEqual([
      [0, "content_filter"],
      [1, "content_filter"],
    ]);
  });

  it.each([
    ["not an object", []],
    ["without candidates or a block reason", { usageMetadata: {} }],
  ])("throws 502 for a reply %s", (_, body) => {
    expect(() => toChatCompletion(body, context)).toThrow(expect.objectContaining({ status: 502, code: "upstream_error" }));
  });

  it("throws 502 for a reply that is not JSON", () => {
    expect(() => parseCompletionText("<html>oops</html>", context)).toThrow(expect.objectContaining({ status: 502, message: "gemini: the reply is not valid JSON." }));
  });
});

describe("mapFinishReason", () => {
  it.each([
    ["STOP", false, "stop"],
    ["STOP", true, "tool_calls"],
    ["MAX_TOKENS", false, "length"],
    ["MAX_TOKENS", true, "length"],
    ["CONTINUATION", false, "length"],
    ["SAFETY", false, "content_filter"],
    ["RECITATION", false, "content_filter"],
    ["BLOCKLIST", false, "content_filter"],
    ["PROHIBITED_CONTENT", false, "content_filter"],
    ["SPII", false, "content_filter"],
    ["IMAGE_SAFETY", false, "content_filter"],
    ["IMAGE_PROHIBITED_CONTENT", false, "content_filter"],
    ["MALFORMED_FUNCTION_CALL", false, "error"],
    ["UNEXPECTED_TOOL_CALL", false, "error"],
    ["LANGUAGE", false, "stop"],
    ["OTHER", false, "stop"],
    ["FINISH_REASON_UNSPECIFIED", false, "stop"],
    ["SOMETHING_NEW", false, "stop"],
  ] as const)("%s (tool calls: %s) -> %s, keeping the native reason", (reason, tools, expected) => {
    expect(mapFinishReason(reason, tools)).toEqual({ finish_reason: expected, native_finish_reason: reason });
  });

  it("has no native reason when Gemini gave none", () => {
    expect(mapFinishReason(undefined, false)).toEqual({ finish_reason: "stop" });
    expect(mapFinishReason(undefined, true)).toEqual({ finish_reason: "tool_calls" });
  });
});

describe("mapUsage", () => {
  it("counts thoughts as completion and reasoning tokens, and reports cached tokens", () => {
    expect(mapUsage({ promptTokenCount: 100, candidatesTokenCount: 20, thoughtsTokenCount: 30, cachedContentTokenCount: 64, totalTokenCount: 150 })).toEqual({
      prompt_tokens: 100,
      completion_tokens: 50,
      total_tokens: 150,
      prompt_tokens_details: { cached_tokens: 64 },
      completion_tokens_details: { reasoning_tokens: 30 },
    });
  });

  it("counts tool-use prompt tokens as prompt tokens and sums when the total is missing", () => {
    expect(mapUsage({ promptTokenCount: 10, toolUsePromptTokenCount: 5, candidatesTokenCount: 2 })).toEqual({ prompt_tokens: 15, completion_tokens: 2, total_tokens: 17 });
  });

  it("reads missing or broken counts as zero", () => {
    expect(mapUsage(undefined)).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
    expect(mapUsage({ promptTokenCount: -3, candidatesTokenCount: Number.NaN })).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });
});
