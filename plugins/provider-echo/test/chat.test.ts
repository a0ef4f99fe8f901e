import { afterEach, describe, expect, test } from "vitest";
import type { FunctionTool } from "@modelmux/core";
import { NO_USER_MESSAGE_TEXT } from "../src/reply.ts";
import { chat, offlineHttp, setupEcho } from "./helpers.ts";

const weather: FunctionTool = {
  type: "function",
  function: {
    name: "get_weather",
    parameters: {
      type: "object",
      properties: {
        location: { type: "string" },
        unit: { type: "string", enum: ["c", "f"] },
        days: { type: "integer", minimum: 1 },
        detailed: { type: "boolean" },
        note: { type: "string" },
      },
      required: ["location", "unit", "days", "detailed"],
    },
  },
};
const search: FunctionTool = { type: "function", function: { name: "search", parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] } } };

afterEach(() => expect(offlineHttp.calls).toBe(0));

describe("reply text", () => {
  test("echoes the last user message, with the bare model id", async () => {
    const reply = await chat(await setupEcho(), {
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "first question" },
        { role: "assistant", content: "first answer" },
        { role: "user", content: "second question" },
      ],
    });
    expect(reply).toMatchObject({ object: "chat.completion", model: "echo-1" });
    expect(reply.id).toMatch(/^chatcmpl-echo-/);
    expect(reply.choices).toEqual([{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "second question" }, logprobs: null }]);
    expect(reply).not.toHaveProperty("service_tier");
  });

  test("joins text parts with newlines and describes images", async () => {
    const reply = await chat(await setupEcho(), {
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is in" },
            { type: "image_url", image_url: { url: "https://example.com/cat.png" } },
            { type: "text", text: "this picture?" },
          ],
        },
      ],
    });
    expect(reply.choices[0]?.message.content).toBe("What is in\n[image]\nthis picture?");
  });

  test("puts the prefix option before the echo", async () => {
    const reply = await chat(await setupEcho({ prefix: "echo: " }));
    expect(reply.choices[0]?.message.content).toBe("echo: Hello there, echo model!");
  });

  test("answers a fixed text when there is no user message", async () => {
    const reply = await chat(await setupEcho(), { messages: [{ role: "system", content: "You are a test." }] });
    expect(reply.choices[0]?.message.content).toBe(NO_USER_MESSAGE_TEXT);
  });

  test("is deterministic apart from id and created", async () => {
    const provider = await setupEcho();
    const a = await chat(provider, { tools: [weather], tool_choice: "required" });
    const b = await chat(provider, { tools: [weather], tool_choice: "required" });
    expect(a.id).not.toBe(b.id);
    expect({ ...a, id: "", created: 0 }).toEqual({ ...b, id: "", created: 0 });
    expect(Math.abs(a.created - Date.now() / 1000)).toBeLessThan(5);
  });
});

describe("tool calls", () => {
  test("calls a tool the last user message names, with arguments built from its schema", async () => {
    const text = "Please use GET_WEATHER for Paris";
    const reply = await chat(await setupEcho(), { messages: [{ role: "user", content: text }], tools: [search, weather] });
    const choice = reply.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toHaveLength(1);
    const toolCall = choice.message.tool_calls![0]!;
    expect(toolCall).toMatchObject({ type: "function", function: { name: "get_weather" } });
    expect(toolCall.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(JSON.parse(toolCall.function.arguments)).toEqual({ location: text, unit: "c", days: 1, detailed: false });
  });

  test("needs the whole name: a longer word does not trigger a call", async () => {
    const reply = await chat(await setupEcho(), { messages: [{ role: "user", content: "research get_weathers" }], tools: [search, weather] });
    expect(reply.choices[0]?.finish_reason).toBe("stop");
    expect(reply.choices[0]?.message.tool_calls).toBeUndefined();
  });

  test("tool_choice none never calls, even when a tool is named", async () => {
    const reply = await chat(await setupEcho(), { messages: [{ role: "user", content: "use get_weather" }], tools: [weather], tool_choice: "none" });
    expect(reply.choices[0]).toMatchObject({ finish_reason: "stop", message: { content: "use get_weather" } });
    expect(reply.choices[0]?.message.tool_calls).toBeUndefined();
  });

  test("tool_choice required calls the first tool; a named tool_choice calls that tool", async () => {
    const provider = await setupEcho();
    const required = await chat(provider, { tools: [search, weather], tool_choice: "required" });
    expect(required.choices[0]?.message.tool_calls?.[0]?.function).toEqual({ name: "search", arguments: JSON.stringify({ q: "Hello there, echo model!" }) });
    const named = await chat(provider, { tools: [search, weather], tool_choice: { type: "function", function: { name: "get_weather" } } });
    expect(named.choices[0]?.message.tool_calls?.[0]?.function.name).toBe("get_weather");
  });

  test("answers a tool result with text that includes it", async () => {
    const reply = await chat(await setupEcho(), {
      tools: [weather],
      messages: [
        { role: "user", content: "use get_weather for Paris" },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "call_1", content: '{"temp":21}' },
      ],
    });
    expect(reply.choices[0]).toMatchObject({ finish_reason: "stop", message: { content: 'Tool get_weather returned: {"temp":21}' } });
  });
});

describe("limits and formats", () => {
  test("cuts at the earliest stop sequence", async () => {
    const reply = await chat(await setupEcho(), { stop: ["model", ","] });
    expect(reply.choices[0]).toMatchObject({ finish_reason: "stop", message: { content: "Hello there" } });
    expect(reply.usage!.completion_tokens).toBe(3);
  });

  test("max_completion_tokens cuts the reply and finishes with length", async () => {
    const reply = await chat(await setupEcho(), { max_completion_tokens: 2 });
    expect(reply.choices[0]).toMatchObject({ finish_reason: "length", message: { content: "Hello th" } });
    expect(reply.usage!.completion_tokens).toBe(2);
    const legacy = await chat(await setupEcho(), { max_tokens: 3 });
    expect(legacy.choices[0]).toMatchObject({ finish_reason: "length", message: { content: "Hello there," } });
    const roomy = await chat(await setupEcho(), { max_completion_tokens: 6 });
    expect(roomy.choices[0]).toMatchObject({ finish_reason: "stop", message: { content: "Hello there, echo model!" } });
  });

  test("a stop sequence past the token limit does not count", async () => {
    const reply = await chat(await setupEcho(), { max_completion_tokens: 2, stop: ["model"] });
    expect(reply.choices[0]?.finish_reason).toBe("length");
  });

  test("n gives n identical choices and n times the completion tokens", async () => {
    const reply = await chat(await setupEcho(), { n: 3 });
    expect(reply.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    expect(new Set(reply.choices.map((c) => c.message.content))).toEqual(new Set(["Hello there, echo model!"]));
    expect(reply.usage!.completion_tokens).toBe(18);
  });

  test("json_object wraps the echo in an object", async () => {
    const reply = await chat(await setupEcho({ prefix: "> " }), { response_format: { type: "json_object" } });
    expect(JSON.parse(reply.choices[0]!.message.content!)).toEqual({ echo: "> Hello there, echo model!" });
  });

  test("json_schema answers a value of the schema", async () => {
    const schema = {
      type: "object",
      properties: { answer: { type: "string" }, score: { type: ["number", "null"] }, tags: { type: "array", items: { $ref: "#/$defs/tag" }, minItems: 1 } },
      required: ["answer", "score", "tags"],
      $defs: { tag: { anyOf: [{ type: "string", maxLength: 5 }, { type: "null" }] } },
    };
    const reply = await chat(await setupEcho(), { response_format: { type: "json_schema", json_schema: { name: "a", schema } } });
    expect(JSON.parse(reply.choices[0]!.message.content!)).toEqual({ answer: "Hello there, echo model!", score: 0, tags: ["Hello"] });
  });

  test("service_tier comes back only when the request set it", async () => {
    const reply = await chat(await setupEcho(), { service_tier: "auto" });
    expect(reply.service_tier).toBe("auto");
  });

  test("usage counts one token per 4 characters, rounded up, per message", async () => {
    const reply = await chat(await setupEcho(), {
      messages: [
        { role: "system", content: "You are helpful." }, // 16 characters: 4 tokens
        { role: "user", content: "Hello there, echo model!" }, // 24 characters: 6 tokens
        { role: "user", content: "Hi" }, // 2 characters: 1 token
      ],
    });
    expect(reply.usage).toEqual({ prompt_tokens: 11, completion_tokens: 1, total_tokens: 12 });
  });

  test("declares its capabilities", async () => {
    const capabilities = (await setupEcho()).capabilities("echo-1");
    for (const name of ["chat", "streaming", "tools", "parallel_tool_calls", "json_mode", "json_schema", "n", "vision", "images", "responses"] as const) expect(capabilities[name]).toBe(true);
    for (const name of ["logprobs", "audio", "reasoning_effort"] as const) expect(capabilities[name]).toBe(false);
  });
});
