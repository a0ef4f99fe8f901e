import { describe, expect, it } from "vitest";
import { type ChatMessage, type ChatRequest } from "@modelmux/core";
import { parseToolArguments, toAnthropicRequest, toImageBlock, toMessages, toSystem, toToolChoice, toTools } from "../src/request.ts";
import { thrown } from "@modelmux/core/testing";

const OPTIONS = { defaultMaxTokens: 4096 };
const build = (extra: Partial<ChatRequest>, model = "claude-sonnet-4-5") =>
  toAnthropicRequest({ model: "anthropic/x", messages: [{ role: "user", content: "Hi" }], ...extra }, model, OPTIONS);
const call = (id: string, name: string, args: string) => ({ id, type: "function" as const, function: { name, arguments: args } });

describe("toAnthropicRequest: basics", () => {
  it("sends the bare model, the default max_tokens and a plain user turn as a string", () => {
    expect(build({})).toEqual({ model: "claude-sonnet-4-5", max_tokens: 4096, messages: [{ role: "user", content: "Hi" }] });
  });

  it.each([
    [{ max_completion_tokens: 100, max_tokens: 200 }, 100],
    [{ max_tokens: 200 }, 200],
    [{ max_completion_tokens: null, max_tokens: null }, 4096],
  ])("takes max_completion_tokens ?? max_tokens ?? default (%j -> %i)", (extra, expected) => {
    expect(build(extra).max_tokens).toBe(expected);
  });

  it("maps stop to stop_sequences, a string to a one-item list", () => {
    expect(build({ stop: "END" }).stop_sequences).toEqual(["END"]);
    expect(build({ stop: ["END", "###"] }).stop_sequences).toEqual(["END", "###"]);
    expect(build({}).stop_sequences).toBeUndefined();
  });

  it("clamps temperature to Anthropic's 0..1 and passes top_p", () => {
    expect(build({ temperature: 1.7, top_p: 0.9 })).toMatchObject({ temperature: 1, top_p: 0.9 });
    expect(build({ temperature: 0.3 }).temperature).toBe(0.3);
    expect(build({ temperature: 0 }).temperature).toBe(0);
  });

  it("maps user to metadata.user_id and stream to stream: true", () => {
    expect(build({ user: "alice", stream: true, stream_options: { include_usage: true } })).toMatchObject({ metadata: { user_id: "alice" }, stream: true });
    expect(build({ stream: false })).not.toHaveProperty("stream");
  });

  it("drops what has no equivalent: seed, penalties, logit_bias, service_tier, stream_options", () => {
    const body = build({ seed: 7, frequency_penalty: 1, presence_penalty: 1, logit_bias: { "1": 2 }, service_tier: "auto", prompt_cache_key: "k", stream: true, stream_options: { include_usage: true } });
    expect(Object.keys(body).sort()).toEqual(["max_tokens", "messages", "model", "stream"]);
  });
});

describe("system and developer messages", () => {
  it("lifts them, wherever they stand, into one system string", () => {
    const messages: ChatMessage[] = [
      { role: "system", content: "Be terse." },
      { role: "user", content: "Hi" },
      { role: "developer", content: "Answer in French." },
      { role: "user", content: "Again" },
    ];
    const body = build({ messages });
    expect(body.system).toBe("Be terse.\n\nAnswer in French.");
    // The two user turns are now adjacent and merged.
    expect(body.messages).toEqual([{ role: "user", content: [{ type: "text", text: "Hi" }, { type: "text", text: "Again" }] }]);
  });

  it("gives text blocks, keeping cache_control, when a system message has parts", () => {
    const messages: ChatMessage[] = [
      { role: "system", content: "Rules." },
      { role: "system", content: [{ type: "text", text: "Long context", cache_control: { type: "ephemeral" } }] },
    ];
    expect(toSystem(messages)).toEqual([
      { type: "text", text: "Rules." },
      { type: "text", text: "Long context", cache_control: { type: "ephemeral" } },
    ]);
  });

  it("sends no system when there is none, or when it is empty", () => {
    expect(build({})).not.toHaveProperty("system");
    expect(build({ messages: [{ role: "system", content: "" }, { role: "user", content: "Hi" }] })).not.toHaveProperty("system");
    expect(build({ messages: [{ role: "system", content: [{ type: "text", text: "" }] }, { role: "user", content: "Hi" }] })).not.toHaveProperty("system");
  });
});

describe("turns", () => {
  it("merges consecutive same-role turns into one message's blocks", () => {
    const messages: ChatMessage[] = [
      { role: "user", content: "a" },
      { role: "user", content: [{ type: "text", text: "b" }] },
      { role: "assistant", content: "c" },
      { role: "assistant", content: "d" },
      { role: "user", content: "e" },
    ];
    expect(toMessages(messages)).toEqual([
      { role: "user", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] },
      { role: "assistant", content: [{ type: "text", text: "c" }, { type: "text", text: "d" }] },
      { role: "user", content: "e" },
    ]);
  });

  it("turns assistant tool_calls into tool_use blocks and tool messages into ONE user turn of tool_results", () => {
    const messages: ChatMessage[] = [
      { role: "user", content: "Weather in Paris and Rome?" },
      { role: "assistant", content: "Checking.", tool_calls: [call("toolu_1", "get_weather", '{"city":"Paris"}'), call("toolu_2", "get_weather", '{"city":"Rome"}')] },
      { role: "tool", tool_call_id: "toolu_1", content: "sunny" },
      { role: "tool", tool_call_id: "toolu_2", content: [{ type: "text", text: "rain" }] },
      { role: "user", content: "Thanks" },
    ];
    expect(toMessages(messages)).toEqual([
      { role: "user", content: "Weather in Paris and Rome?" },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Checking." },
          { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
          { type: "tool_use", id: "toolu_2", name: "get_weather", input: { city: "Rome" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: "sunny" },
          { type: "tool_result", tool_use_id: "toolu_2", content: [{ type: "text", text: "rain" }] },
          { type: "text", text: "Thanks" },
        ],
      },
    ]);
  });

  it("leaves out empty texts (Anthropic rejects them): an assistant's null or empty content beside its tool call", () => {
    const messages: ChatMessage[] = [
      { role: "user", content: "x" },
      { role: "assistant", content: "", tool_calls: [call("t1", "f", "")] },
      { role: "tool", tool_call_id: "t1", content: "" },
    ];
    expect(toMessages(messages)).toEqual([
      { role: "user", content: "x" },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1" }] },
    ]);
  });

  it("refuses the deprecated function role and function_call with a 400 naming the field", () => {
    expect(thrown(() => toMessages([{ role: "function", name: "f", content: "x" }]))).toMatchObject({ status: 400, param: "messages[0].role" });
    const legacy: ChatMessage = { role: "assistant", content: null, function_call: { name: "f", arguments: "{}" } };
    expect(thrown(() => toMessages([{ role: "user", content: "x" }, legacy]))).toMatchObject({ status: 400, param: "messages[1].function_call" });
  });

  it("refuses a content part Anthropic has no block for", () => {
    const messages: ChatMessage[] = [{ role: "user", content: [{ type: "text", text: "hi" }, { type: "input_audio", input_audio: { data: "x", format: "wav" } }] }];
    expect(thrown(() => toMessages(messages))).toMatchObject({ status: 400, code: "invalid_value", param: "messages[0].content[1].type" });
  });
});

describe("images", () => {
  it("maps a base64 data URL to a base64 source", () => {
    expect(toImageBlock("data:image/png;base64,iVBORw0KGgo=", "p")).toEqual({ type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } });
    expect(toImageBlock("data:IMAGE/JPEG;name=a.jpg;base64,/9j/4A==", "p").source).toEqual({ type: "base64", media_type: "image/jpeg", data: "/9j/4A==" });
  });

  it("maps an http(s) URL to a url source", () => {
    expect(toImageBlock("https://example.com/cat.png", "p")).toEqual({ type: "image", source: { type: "url", url: "https://example.com/cat.png" } });
    expect(toImageBlock("http://example.com/cat.png", "p").source).toEqual({ type: "url", url: "http://example.com/cat.png" });
  });

  it("refuses other URLs with a 400 naming the part", () => {
    expect(thrown(() => toImageBlock("ftp://example.com/cat.png", "messages[0].content[1]"))).toMatchObject({ param: "messages[0].content[1].image_url.url" });
    expect(thrown(() => toImageBlock("data:image/png,rawbytes", "m"))).toMatchObject({ status: 400 });
  });

  it("keeps image parts in order with the text, in a user turn, with cache_control", () => {
    const messages: ChatMessage[] = [
      { role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image_url", image_url: { url: "https://x.test/a.png", detail: "high" }, cache_control: { type: "ephemeral" } }] },
    ];
    expect(toMessages(messages)[0]?.content).toEqual([
      { type: "text", text: "What is this?" },
      { type: "image", source: { type: "url", url: "https://x.test/a.png" }, cache_control: { type: "ephemeral" } },
    ]);
  });
});

describe("tools", () => {
  const weather = { type: "function" as const, function: { name: "get_weather", description: "Weather", parameters: { type: "object", properties: { city: { type: "string" } } } } };

  it("maps tools to name, description and input_schema; no parameters means any object", () => {
    expect(toTools([weather, { type: "function", function: { name: "now" } }])).toEqual([
      { name: "get_weather", description: "Weather", input_schema: { type: "object", properties: { city: { type: "string" } } } },
      { name: "now", input_schema: { type: "object" } },
    ]);
  });

  it.each([
    ["none", undefined, { type: "none" }],
    ["auto", undefined, { type: "auto" }],
    ["required", undefined, { type: "any" }],
    [{ type: "function", function: { name: "get_weather" } }, undefined, { type: "tool", name: "get_weather" }],
    [undefined, undefined, undefined],
    [undefined, true, undefined],
    [undefined, false, { type: "auto", disable_parallel_tool_use: true }],
    ["required", false, { type: "any", disable_parallel_tool_use: true }],
    [{ type: "function", function: { name: "f" } }, false, { type: "tool", name: "f", disable_parallel_tool_use: true }],
    ["none", false, { type: "none" }],
  ] as const)("tool_choice %j with parallel_tool_calls %j -> %j", (choice, parallel, expected) => {
    expect(toToolChoice(choice, parallel)).toEqual(expected);
  });

  it("sends tools and tool_choice together, and no tool_choice without tools", () => {
    expect(build({ tools: [weather], tool_choice: "required", parallel_tool_calls: false })).toMatchObject({
      tools: [{ name: "get_weather" }],
      tool_choice: { type: "any", disable_parallel_tool_use: true },
    });
    expect(build({ tool_choice: "auto", parallel_tool_calls: false })).not.toHaveProperty("tool_choice");
  });

  it("parses tool call arguments: empty is {}, anything but a JSON object is a 400", () => {
    expect(parseToolArguments('{"a":1}', "p")).toEqual({ a: 1 });
    expect(parseToolArguments("  ", "p")).toEqual({});
    expect(thrown(() => parseToolArguments('{"a":', "messages[1].tool_calls[0].function.arguments"))).toMatchObject({ status: 400, param: "messages[1].tool_calls[0].function.arguments" });
    expect(thrown(() => parseToolArguments("[1]", "p")).status).toBe(400);
  });

  it("refuses arguments nested past 64 levels with a 400 naming the field, in the whole request too", () => {
    const param = "messages[1].tool_calls[0].function.arguments";
    for (const levels of [65, 100_000]) {
      const args = `{"a":${"[".repeat(levels - 1)}${"]".repeat(levels - 1)}}`;
      expect(thrown(() => parseToolArguments(args, param))).toMatchObject({ status: 400, code: "nesting_too_deep", param });
      const messages = [{ role: "user" as const, content: "x" }, { role: "assistant" as const, content: null, tool_calls: [call("c1", "f", args)] }];
      expect(thrown(() => build({ messages }))).toMatchObject({ status: 400, code: "nesting_too_deep", param });
    }
    expect(parseToolArguments(`{"a":${"[".repeat(63)}${"]".repeat(63)}}`, "p")).toHaveProperty("a");
  });
});

describe("reasoning_effort -> extended thinking", () => {
  it.each([
    ["minimal", 1024],
    ["low", 1024],
    ["medium", 4096],
    ["high", 16384],
  ] as const)("%s sets a budget of %i", (effort, budget) => {
    expect(build({ reasoning_effort: effort, max_completion_tokens: 32000 })).toMatchObject({ thinking: { type: "enabled", budget_tokens: budget }, max_tokens: 32000 });
  });

  it("raises max_tokens above the budget when it is not already, by adding the budget", () => {
    expect(build({ reasoning_effort: "high" }).max_tokens).toBe(16384 + 4096);
    expect(build({ reasoning_effort: "medium", max_tokens: 4096 }).max_tokens).toBe(8192);
    expect(build({ reasoning_effort: "medium", max_tokens: 4097 }).max_tokens).toBe(4097);
  });

  it("drops temperature and top_p, which thinking forbids", () => {
    const body = build({ reasoning_effort: "low", temperature: 0.2, top_p: 0.5 });
    expect(body).not.toHaveProperty("temperature");
    expect(body).not.toHaveProperty("top_p");
  });

  it("is not enabled when the last assistant turn is a tool call (Anthropic would want its thinking block back)", () => {
    const messages: ChatMessage[] = [
      { role: "user", content: "x" },
      { role: "assistant", content: null, tool_calls: [call("t1", "f", "{}")] },
      { role: "tool", tool_call_id: "t1", content: "ok" },
    ];
    const body = build({ messages, reasoning_effort: "high", temperature: 0.5 });
    expect(body).not.toHaveProperty("thinking");
    expect(body).toMatchObject({ max_tokens: 4096, temperature: 0.5 });
  });

  it("sends no thinking without reasoning_effort", () => {
    expect(build({ reasoning_effort: null })).not.toHaveProperty("thinking");
  });
});
