import { describe, expect, it } from "vitest";
import { ModelmuxError } from "@modelmux/core";
import { mapFinishReason, parseCompletionText, toChatCompletion } from "../src/response.ts";


const context = { provider: "openai", model: "gpt-4o-mini" };

/** A reply exactly as OpenAI sends it. */
const openaiReply = {
  id: "chatcmpl-abc",
  object: "chat.completion",
  created: 1_700_000_000,
  model: "gpt-4o-mini-2024-07-18",
  choices: [
    {
      index: 0,
      message: {
        role: "assistant",
        content: null,
        refusal: null,
        annotations: [],
        tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
      },
      logprobs: null,
      finish_reason: "tool_calls",
    },
  ],
  usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17, prompt_tokens_details: { cached_tokens: 0 } },
  service_tier: "default",
  system_fingerprint: "fp_1",
};

describe("toChatCompletion", () => {
  it("keeps an OpenAI reply as it is, apart from the unrequested service_tier", () => {
    const { service_tier, ...expected } = openaiReply;
    expect(service_tier).toBe("default");
    expect(toChatCompletion(openaiReply, context)).toStrictEqual(expected);
  });

  it("keeps service_tier when the request set one", () => {
    expect(toChatCompletion(openaiReply, { ...context, serviceTier: "auto" }).service_tier).toBe("default");
  });

  it("fills the required fields a compatible server left out, but makes up no usage", () => {
    const before = Math.floor(Date.now() / 1000);
    for (const usage of [undefined, null, "none"]) {
      const completion = toChatCompletion({ choices: [{ message: { content: "hi" }, finish_reason: null }], usage }, context);
      expect(completion).toMatchObject({
        object: "chat.completion",
        model: "gpt-4o-mini",
        choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "hi" } }],
      });
      expect(completion).not.toHaveProperty("usage");
      expect(completion.id).toMatch(/^chatcmpl-/);
      expect(completion.created).toBeGreaterThanOrEqual(before);
    }
  });

  it("computes total_tokens when it is missing", () => {
    expect(toChatCompletion({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 4 } }, context).usage!.total_tokens).toBe(7);
  });

  it("turns tool arguments sent as an object into a JSON string", () => {
    const reply = { choices: [{ message: { tool_calls: [{ function: { name: "f", arguments: { a: 1 } } }] }, finish_reason: "tool_calls" }] };
    expect(toChatCompletion(reply, context).choices[0]?.message.tool_calls).toEqual([{ id: "call_0_0", type: "function", function: { name: "f", arguments: '{"a":1}' } }]);
  });

  it.each([
    [{ choices: null }],
    [{ error: { message: "oops" } }],
    ["a string"],
    [null],
  ])("rejects %j as 502 upstream_error", (body) => {
    const error = (() => {
      try {
        toChatCompletion(body, context);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ModelmuxError);
    expect(error).toMatchObject({ status: 502, code: "upstream_error" });
  });
});

describe("mapFinishReason", () => {
  it.each([
    ["stop", { finish_reason: "stop" }],
    ["length", { finish_reason: "length" }],
    ["tool_calls", { finish_reason: "tool_calls" }],
    ["content_filter", { finish_reason: "content_filter" }],
    ["function_call", { finish_reason: "tool_calls", native_finish_reason: "function_call" }],
    ["eos", { finish_reason: "stop", native_finish_reason: "eos" }],
    [null, { finish_reason: "stop" }],
  ])("%s -> %j", (reason, expected) => {
    expect(mapFinishReason(reason)).toEqual(expected);
  });
});

describe("parseCompletionText", () => {
  it("maps a body that is not JSON to 502 upstream_error", () => {
    expect(() => parseCompletionText("<html>oops</html>", context)).toThrow(expect.objectContaining({ status: 502, code: "upstream_error" }));
  });

  it("parses a JSON body", () => {
    expect(parseCompletionText(JSON.stringify(openaiReply), context).id).toBe("chatcmpl-abc");
  });
});
