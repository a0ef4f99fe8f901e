import { describe, expect, test } from "vitest";
import type { ChatCompletionChunk, ChatMessage, FunctionTool } from "@modelmux/core";
import { chat, collect, setupEcho } from "./helpers.ts";

/** The conversation the echo answers "Hello there, echo model!", then the assistant's `prefill`. */
const prefilled = (prefill: ChatMessage["content"]): ChatMessage[] => [
  { role: "user", content: "Hello there, echo model!" },
  { role: "assistant", content: prefill },
];

const streamed = (chunks: ChatCompletionChunk[], index = 0) =>
  chunks.flatMap((c) => c.choices.filter((choice) => choice.index === index).map((choice) => choice.delta.content ?? ""));

describe("a final assistant message (prefill)", () => {
  test("is continued: the reply is the rest of the answer, the prefill counted as prompt only", async () => {
    const reply = await chat(await setupEcho(), { messages: prefilled("Hello there,") });
    expect(reply.choices[0]).toMatchObject({ finish_reason: "stop", message: { role: "assistant", content: " echo model!" } });
    // Prompt: 24 + 12 characters, 6 + 3 tokens; completion: " echo model!", 12 characters, 3 tokens.
    expect(reply.usage).toEqual({ prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 });
  });

  test("is compared without its trailing whitespace, so the rest starts with it", async () => {
    const reply = await chat(await setupEcho(), { messages: prefilled("Hello there, \n") });
    expect(reply.choices[0]?.message.content).toBe(" echo model!");
    expect(reply.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 3 });
  });

  test("gets the whole answer when the answer does not start with it", async () => {
    const reply = await chat(await setupEcho(), { messages: prefilled("Goodbye") });
    expect(reply.choices[0]?.message.content).toBe("Hello there, echo model!");
    expect(reply.usage).toEqual({ prompt_tokens: 8, completion_tokens: 6, total_tokens: 14 });
  });

  test("continues the answer with the prefix option, in text parts, and for every choice", async () => {
    const provider = await setupEcho({ prefix: "echo: " });
    const reply = await chat(provider, { n: 2, messages: prefilled([{ type: "text", text: "echo: Hello" }]) });
    expect(reply.choices.map((choice) => choice.message.content)).toEqual([" there, echo model!", " there, echo model!"]);
    expect(reply.usage).toMatchObject({ completion_tokens: 2 * 5 });
  });

  test("keeps a tool call whole: it does not start with the prefill", async () => {
    const tool: FunctionTool = { type: "function", function: { name: "get_time", parameters: { type: "object", properties: {} } } };
    const messages: ChatMessage[] = [
      { role: "user", content: "call get_time please" },
      { role: "assistant", content: "Let me" },
    ];
    const reply = await chat(await setupEcho(), { tools: [tool], messages });
    expect(reply.choices[0]).toMatchObject({ finish_reason: "tool_calls", message: { content: null, tool_calls: [{ function: { name: "get_time", arguments: "{}" } }] } });
  });

  test("streams the rest in chunk_size pieces, with the same usage", async () => {
    const provider = await setupEcho({ chunk_size: 4 });
    const chunks = await collect(provider, { messages: prefilled("Hello there,") });
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: "assistant", content: "" });
    expect(streamed(chunks).filter(Boolean)).toEqual([" ech", "o mo", "del!"]);
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe("stop");
    expect(chunks.at(-1)?.usage).toEqual({ prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 });
  });

  test("is declared: prefill is on", async () => {
    expect((await setupEcho()).capabilities("echo-1").prefill).toBe(true);
  });
});
