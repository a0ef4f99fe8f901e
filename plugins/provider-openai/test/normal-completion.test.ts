/**
 * `isNormalCompletion` decides when a reply is sent as the text it came in, unmapped: it must say
 * yes exactly when `toChatCompletion` would give the reply back unchanged. Checked against that
 * mapping as the oracle, for OpenAI's reply and for one change at a time of every kind the mapping
 * repairs or drops.
 */
import { isDeepStrictEqual } from "node:util";
import { describe, expect, it } from "vitest";
import { isNormalCompletion, parseCompletionText, toChatCompletion } from "../src/response.ts";

const base = () => ({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1763800000,
  model: "gpt-4o-mini-2024-07-18",
  choices: [{ index: 0, message: { role: "assistant", content: "Hi", refusal: null, annotations: [] }, logprobs: null, finish_reason: "stop" }],
  usage: {
    prompt_tokens: 3,
    completion_tokens: 1,
    total_tokens: 4,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0 },
  },
  service_tier: "default",
  system_fingerprint: "fp_1",
});

type Reply = ReturnType<typeof base> & Record<string, unknown>;
const toolCall = { id: "call_1", type: "function", function: { name: "f", arguments: "{}" } };

/** One change each: the name says what. */
const variants: Record<string, (r: Reply) => void> = {
  unchanged: () => {},
  "no system_fingerprint": (r) => delete (r as Partial<Reply>).system_fingerprint,
  "system_fingerprint null": (r) => (r.system_fingerprint = null as never),
  "no service_tier": (r) => delete (r as Partial<Reply>).service_tier,
  "service_tier null": (r) => (r.service_tier = null as never),
  "an extra key": (r) => (r.prompt_filter_results = []),
  "empty id": (r) => (r.id = ""),
  "no id": (r) => delete (r as Partial<Reply>).id,
  "another object": (r) => (r.object = "chat.completion.chunk"),
  "fractional created": (r) => (r.created = 1.5),
  "no model": (r) => delete (r as Partial<Reply>).model,
  "no usage": (r) => delete (r as Partial<Reply>).usage,
  "zero total": (r) => (r.usage.total_tokens = 0),
  "all zero usage": (r) => Object.assign(r.usage, { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }),
  "usage details null": (r) => (r.usage.prompt_tokens_details = null as never),
  "no usage details": (r) => delete (r.usage as Partial<Reply["usage"]>).completion_tokens_details,
  "an extra usage key": (r) => ((r.usage as Record<string, unknown>).cost = 1),
  "negative tokens": (r) => (r.usage.prompt_tokens = -1),
  "finish_reason null": (r) => (r.choices[0]!.finish_reason = null as never),
  "unknown finish_reason": (r) => (r.choices[0]!.finish_reason = "eos"),
  "function_call finish": (r) => (r.choices[0]!.finish_reason = "function_call"),
  "no choice index": (r) => delete (r.choices[0] as Partial<Reply["choices"][0]>).index,
  "no logprobs": (r) => delete (r.choices[0] as Partial<Reply["choices"][0]>).logprobs,
  "logprobs object": (r) => (r.choices[0]!.logprobs = { content: [] } as never),
  "an extra choice key": (r) => ((r.choices[0] as Record<string, unknown>).stop_reason = null),
  "content null": (r) => (r.choices[0]!.message.content = null as never),
  "no content": (r) => delete (r.choices[0]!.message as Partial<Reply["choices"][0]["message"]>).content,
  "content an array": (r) => (r.choices[0]!.message.content = [] as never),
  "no refusal": (r) => delete (r.choices[0]!.message as Partial<Reply["choices"][0]["message"]>).refusal,
  "refusal text": (r) => (r.choices[0]!.message.refusal = "no" as never),
  "another role": (r) => (r.choices[0]!.message.role = "tool"),
  "no annotations": (r) => delete (r.choices[0]!.message as Partial<Reply["choices"][0]["message"]>).annotations,
  "annotations null": (r) => (r.choices[0]!.message.annotations = null as never),
  "an extra message key": (r) => ((r.choices[0]!.message as Record<string, unknown>).function_call = null),
  "audio object": (r) => ((r.choices[0]!.message as Record<string, unknown>).audio = { id: "a" }),
  "audio null": (r) => ((r.choices[0]!.message as Record<string, unknown>).audio = null),
  "tool calls": (r) => ((r.choices[0]!.message as Record<string, unknown>).tool_calls = [structuredClone(toolCall)]),
  "empty tool calls": (r) => ((r.choices[0]!.message as Record<string, unknown>).tool_calls = []),
  "tool arguments an object": (r) => ((r.choices[0]!.message as Record<string, unknown>).tool_calls = [{ ...toolCall, function: { name: "f", arguments: {} } }]),
  "tool call without id": (r) => ((r.choices[0]!.message as Record<string, unknown>).tool_calls = [{ type: "function", function: toolCall.function }]),
  "tool call extra key": (r) => ((r.choices[0]!.message as Record<string, unknown>).tool_calls = [{ ...toolCall, index: 0 }]),
  "two choices": (r) => r.choices.push({ ...structuredClone(r.choices[0]!), index: 1 }),
  "no choices": (r) => (r.choices = []),
};

describe("isNormalCompletion", () => {
  it.each(Object.keys(variants))("agrees with toChatCompletion: %s", (name) => {
    const reply = base() as Reply;
    variants[name]!(reply);
    const mapped = toChatCompletion(structuredClone(reply), { provider: "p", model: "m", serviceTier: "default" });
    expect(isNormalCompletion(reply)).toBe(isDeepStrictEqual(mapped, reply));
  });

  it("says yes to OpenAI's own reply, so it is sent as its text", () => {
    expect(isNormalCompletion(base())).toBe(true);
  });
});

describe("parseCompletionText", () => {
  it("gives a normal reply as the same object a mapping would, service_tier removed unless requested", () => {
    const text = JSON.stringify(base());
    expect(parseCompletionText(text, { provider: "p", model: "m" })).toEqual(toChatCompletion(base(), { provider: "p", model: "m" }));
    expect(parseCompletionText(text, { provider: "p", model: "m", serviceTier: "auto" })).toEqual(base());
  });
});
