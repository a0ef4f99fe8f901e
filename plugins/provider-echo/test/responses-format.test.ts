/** `text.format` and the limits on the Responses API: the chat rules for `response_format` and `max_completion_tokens`. */
import { Ajv } from "ajv";
import { describe, expect, test } from "vitest";
import { setupEcho } from "./helpers.ts";
import { create, outputText, type Json } from "./responses-helpers.ts";

const PERSON = {
  type: "object",
  properties: {
    name: { type: "string" },
    age: { type: "integer", minimum: 18 },
    role: { type: "string", enum: ["admin", "user"] },
    tags: { type: "array", items: { type: "string" } },
    address: { $ref: "#/$defs/address" },
  },
  required: ["name", "age", "role", "tags", "address"],
  additionalProperties: false,
  $defs: { address: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false } },
};

describe("text.format", () => {
  test("json_schema: the output text is a JSON value that satisfies the schema, strings filled with the echo", async () => {
    const text = { format: { type: "json_schema", name: "person", schema: PERSON, strict: true } };
    const response = await create(await setupEcho(), { input: "Ada", text });
    expect(response.status).toBe("completed");
    expect(response.text).toEqual(text);
    const value = JSON.parse(outputText(response)) as unknown;
    expect(value).toEqual({ name: "Ada", age: 18, role: "admin", tags: [], address: { city: "Ada" } });
    expect(new Ajv().validate(PERSON, value)).toBe(true);
  });

  test("json_schema after a tool result: the value still satisfies the schema", async () => {
    const input = [
      { role: "user", content: "weather?" },
      { type: "function_call", call_id: "call_1", name: "get_weather", arguments: "{}" },
      { type: "function_call_output", call_id: "call_1", output: "sunny" },
    ];
    const schema = { type: "object", properties: { summary: { type: "string" } }, required: ["summary"], additionalProperties: false };
    const response = await create(await setupEcho(), { input, text: { format: { type: "json_schema", name: "s", schema } } });
    expect(JSON.parse(outputText(response))).toEqual({ summary: "Tool get_weather returned: sunny" });
  });

  test("json_object: the echo wrapped as {\"echo\": …}, with the prefix option inside", async () => {
    const response = await create(await setupEcho({ prefix: "echo: " }), { input: "hi", text: { format: { type: "json_object" } } });
    expect(JSON.parse(outputText(response))).toEqual({ echo: "echo: hi" });
  });

  test("text (the default): the echo as it is; instructions are not echoed", async () => {
    const response = await create(await setupEcho(), { input: "plain", instructions: "Answer in JSON", text: { format: { type: "text" } } });
    expect(outputText(response)).toBe("plain");
    expect(response.instructions).toBe("Answer in JSON");
  });
});

describe("limits", () => {
  test("max_output_tokens cuts the text: incomplete, reason max_output_tokens, usage of what was sent", async () => {
    const response = await create(await setupEcho(), { input: "abcdefghijklmnopqrstuvwxyz", max_output_tokens: 2 });
    expect(response).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, max_output_tokens: 2 });
    expect(outputText(response)).toBe("abcdefgh");
    expect((response.output as Json[])[0]).toMatchObject({ status: "incomplete" });
    expect(response.usage).toMatchObject({ input_tokens: 7, output_tokens: 2, total_tokens: 9 });
  });

  test("a tool call is never cut", async () => {
    const tools = [{ type: "function", name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] } }];
    const response = await create(await setupEcho(), { input: "lookup a long question", tools, max_output_tokens: 1 });
    expect(response.status).toBe("completed");
    expect((response.output as Json[])[0]).toMatchObject({ type: "function_call", arguments: '{"q":"lookup a long question"}' });
  });
});
