/** The Responses API calls tools by the chat rules (README, "The rules"), in the Responses item shapes. */
import { Ajv } from "ajv";
import { afterEach, describe, expect, test } from "vitest";
import { chat, offlineHttp, setupEcho } from "./helpers.ts";
import { create, functionTool, outputText, WEATHER, type Json } from "./responses-helpers.ts";

const SEARCH = functionTool("search", { type: "object", properties: { q: { type: "string" } }, required: ["q"] });

afterEach(() => expect(offlineHttp.calls).toBe(0));

describe("function calls", () => {
  test("a tool the input mentions is called, with arguments that satisfy its schema", async () => {
    const response = await create(await setupEcho(), { input: "What is the weather? Use get_weather.", tools: [SEARCH, WEATHER] });
    expect(response.status).toBe("completed");
    const output = response.output as Json[];
    expect(output).toHaveLength(1);
    expect(output[0]).toMatchObject({ type: "function_call", status: "completed", name: "get_weather", call_id: expect.stringMatching(/^call_[0-9a-f]{24}$/) });
    expect(output[0]!.id).toMatch(/^fc_/);
    const args = JSON.parse(output[0]!.arguments as string) as unknown;
    expect(args).toEqual({ city: "What is the weather? Use get_weather.", unit: "c", days: 1 });
    expect(new Ajv().validate(WEATHER.parameters as object, args)).toBe(true);
    expect((response.usage as Json).output_tokens).toBe(Math.ceil(("get_weather" + (output[0]!.arguments as string)).length / 4));
  });

  test("the call is the one chat makes for the same conversation", async () => {
    const provider = await setupEcho();
    const input = "please use search";
    const response = await create(provider, { input, tools: [WEATHER, SEARCH] });
    const tools = [WEATHER, SEARCH].map((tool) => ({ type: "function" as const, function: { name: tool.name as string, parameters: tool.parameters as Json } }));
    const reply = await chat(provider, { messages: [{ role: "user", content: input }], tools });
    const call = reply.choices[0]!.message.tool_calls![0]!;
    expect((response.output as Json[])[0]).toMatchObject({ name: call.function.name, arguments: call.function.arguments });
    expect((response.usage as Json).input_tokens).toBe(reply.usage?.prompt_tokens);
  });

  test("tool_choice: required calls the first tool, a named function that one, none never", async () => {
    const provider = await setupEcho();
    const tools = [SEARCH, WEATHER];
    const required = await create(provider, { input: "hello", tools, tool_choice: "required" });
    expect((required.output as Json[])[0]).toMatchObject({ type: "function_call", name: "search", arguments: '{"q":"hello"}' });
    const named = await create(provider, { input: "hello", tools, tool_choice: { type: "function", name: "get_weather" } });
    expect((named.output as Json[])[0]).toMatchObject({ type: "function_call", name: "get_weather" });
    const none = await create(provider, { input: "use search", tools, tool_choice: "none" });
    expect(outputText(none)).toBe("use search");
    const auto = await create(provider, { input: "hello", tools });
    expect(outputText(auto)).toBe("hello");
  });

  test("allowed_tools narrows the tools, with its mode; hosted tools are never called", async () => {
    const provider = await setupEcho();
    const allowed = { type: "allowed_tools", mode: "required", tools: [{ type: "function", name: "get_weather" }] };
    const response = await create(provider, { input: "use search", tools: [SEARCH, WEATHER], tool_choice: allowed });
    expect((response.output as Json[])[0]).toMatchObject({ type: "function_call", name: "get_weather" });
    const hosted = await create(provider, { input: "search the web", tools: [{ type: "web_search_preview" }], tool_choice: { type: "web_search_preview" } });
    expect(outputText(hosted)).toBe("search the web");
  });

  test("function_call_output is answered with text that uses it, so an agent loop ends", async () => {
    const provider = await setupEcho();
    const first = await create(provider, { input: "use get_weather", tools: [WEATHER] });
    const call = (first.output as Json[])[0]!;
    const input = [
      { role: "user", content: "use get_weather" },
      { type: "function_call", id: call.id, call_id: call.call_id, name: call.name, arguments: call.arguments },
      { type: "function_call_output", call_id: call.call_id, output: '{"temp":21}' },
    ];
    const second = await create(provider, { input, tools: [WEATHER] });
    expect(second.status).toBe("completed");
    expect(second.output).toHaveLength(1);
    expect(outputText(second)).toBe('Tool get_weather returned: {"temp":21}');
  });

  test("a tool output in content parts, and two calls answered together, one line each", async () => {
    const input = [
      { role: "user", content: "go" },
      { type: "function_call", call_id: "call_a", name: "search", arguments: '{"q":"a"}' },
      { type: "function_call", call_id: "call_b", name: "get_weather", arguments: "{}" },
      { type: "function_call_output", call_id: "call_a", output: [{ type: "input_text", text: "found" }] },
      { type: "function_call_output", call_id: "call_b", output: "sunny" },
    ];
    const response = await create(await setupEcho(), { input, tools: [SEARCH, WEATHER] });
    expect(outputText(response)).toBe("Tool search returned: found\nTool get_weather returned: sunny");
  });
});
