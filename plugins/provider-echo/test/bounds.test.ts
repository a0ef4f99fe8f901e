/**
 * The echo's bounds (README, "Bounds"): whatever a request asks for, the reply it makes stays small,
 * and stays a pure function of the request.
 */
import { describe, expect, test } from "vitest";
import type { ChatCompletionChunk, FunctionTool } from "@modelmux/core";
import { MAX_STREAM_PIECES, MAX_TEXT_CHARS } from "../src/bounds.ts";
import { countChars, cutChars, splitChars } from "../src/chars.ts";
import { generateImages } from "../src/image.ts";
import { createEchoResponses } from "../src/responses.ts";
import { exampleFromSchema } from "../src/schema-example.ts";
import { call, chat, collect, setupEcho } from "./helpers.ts";

describe("schema examples", () => {
  test("at most 8 items, 100 properties, 16 levels", () => {
    expect(exampleFromSchema({ type: "array", minItems: 10_000_000, items: { type: "integer" } }, "x")).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    const required = Array.from({ length: 100_000 }, (_, i) => `p${i}`);
    expect(Object.keys(exampleFromSchema({ type: "object", required }, "x") as object)).toEqual(required.slice(0, 100));
    let deep: Record<string, unknown> = { type: "integer" };
    for (let i = 0; i < 40; i++) deep = { type: "object", properties: { a: deep }, required: ["a"] };
    expect(JSON.stringify(exampleFromSchema(deep, "x"))).toBe(`${'{"a":'.repeat(16)}null${"}".repeat(16)}`);
  });

  test("a budget of characters for the whole value: strings cut, then arrays and objects stop growing", () => {
    const rows = { type: "array", minItems: 8, items: { type: "object", properties: { s: { type: "string" } }, required: ["s", "t", "u"] } };
    const text = "y".repeat(100_000);
    const json = JSON.stringify(exampleFromSchema(rows, text, 1_000));
    expect(json.length).toBeLessThan(1_100);
    expect(JSON.stringify(exampleFromSchema(rows, text)).length).toBeLessThan(MAX_TEXT_CHARS + 100);
    expect(JSON.stringify(exampleFromSchema({ type: "string", minLength: 1e9 }, text)).length).toBeLessThanOrEqual(MAX_TEXT_CHARS + 2);
  });

  test("a const or enum value larger than the budget becomes null; smaller ones stay", () => {
    const big = { list: Array.from({ length: 100_000 }, (_, i) => i) };
    expect(exampleFromSchema({ const: big }, "x")).toBeNull();
    expect(exampleFromSchema({ enum: [big] }, "x")).toBeNull();
    expect(exampleFromSchema({ const: { a: [1, 2] } }, "x")).toEqual({ a: [1, 2] });
  });

  test("reads no more of a long `type` list or `required` list than it uses; a repeated $ref is resolved once", () => {
    const schema = {
      $defs: { n: { type: Array.from({ length: 200_000 }, () => "null") } },
      type: "object",
      required: Array.from({ length: 200_000 }, () => "a"),
      properties: { a: { type: "array", minItems: 8, items: { $ref: "#/$defs/n" } } },
    };
    expect(exampleFromSchema(schema, "x")).toEqual({ a: [null, null, null, null, null, null, null, null] });
  });

  test("a $ref that leads nowhere (broken percent-encoding, a missing key, not local) is built as text", () => {
    for (const ref of ["#/%E0%A4%A", "#/%", "#/%ZZ", "#/$defs/%ED%A0%80", "#/$defs/missing", "#/$defs/a/%", "https://x.test/s.json#/a"]) {
      const schema = { type: "object", $defs: { a: { type: "integer" } }, properties: { city: { $ref: ref }, n: { $ref: "#/$defs/a" } }, required: ["city", "n"] };
      expect(exampleFromSchema(schema, "Paris"), ref).toEqual({ city: "Paris", n: 0 });
      expect(exampleFromSchema({ $ref: ref }, "Paris"), ref).toBe("Paris");
    }
    expect(exampleFromSchema({ $defs: { "a/b": { type: "boolean" }, "%": { type: "integer" } }, anyOf: [{ $ref: "#/$defs/a~1b" }] }, "x")).toBe(false);
    expect(exampleFromSchema({ $defs: { "%": { type: "integer" } }, $ref: "#/$defs/%25" }, "x")).toBe(0);
  });

  test("a chat request whose tool parameters or response_format have such a $ref gets its reply", async () => {
    const provider = await setupEcho();
    const schema = { type: "object", properties: { city: { $ref: "#/%E0%A4%A" } }, required: ["city"] };
    const messages = [{ role: "user" as const, content: "Paris" }];
    const called = await chat(provider, { messages, tools: [{ type: "function", function: { name: "lookup", parameters: schema } }], tool_choice: "required" });
    expect(called.choices[0]!.message.tool_calls![0]!.function.arguments).toBe('{"city":"Paris"}');
    const formatted = await chat(provider, { messages, response_format: { type: "json_schema", json_schema: { name: "r", schema } } });
    expect(formatted.choices[0]!.message.content).toBe('{"city":"Paris"}');
  });

  test("odd schemas never throw and always give a JSON value (a seeded fuzz of 3,000)", () => {
    let seed = 7;
    const random = () => {
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
      return seed / 4294967296;
    };
    const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!;
    const refs = ["#", "#/", "#/%", "#/%E0%A4%A", "#/$defs/a", "#/$defs/a/items", "#/properties/x", "#/anyOf/0", "#/__proto__", "#/$defs/~0~1", "http://x.test/#/a", ""];
    const leaves: unknown[] = [null, true, false, 0, -1, 1.5, 1e20, "", "x", "object", "array", "string", "integer", [], {}, ["null"], ["string", "null"]];
    const keys = ["type", "properties", "items", "required", "$ref", "enum", "const", "anyOf", "oneOf", "allOf", "minItems", "maxLength", "minimum", "maximum", "exclusiveMinimum", "pattern", "format", "$defs", "prefixItems"];
    const schema = (depth: number): unknown => {
      if (depth > 5 || random() < 0.15) return pick(leaves);
      const out: Record<string, unknown> = {};
      for (let i = Math.floor(random() * 5); i > 0; i--) {
        const key = pick(keys);
        const roll = random();
        out[key] = key === "$ref" ? pick(refs) : roll < 0.3 ? pick(leaves) : roll < 0.5 ? [schema(depth + 1), schema(depth + 1)] : key === "properties" || key === "$defs" ? { a: schema(depth + 1), x: schema(depth + 1), __proto__x: schema(depth + 1) } : schema(depth + 1);
      }
      return out;
    };
    for (let i = 0; i < 3_000; i++) {
      const parsed: unknown = JSON.parse(JSON.stringify(schema(0)));
      const value = exampleFromSchema(parsed, pick(["", "hi", "😀x"]), pick([16_384, 10, 0]));
      expect(typeof JSON.stringify(value ?? null)).toBe("string");
    }
  });

  test("a `__proto__` property is an own property of the example, never its prototype", () => {
    // Parsed, as a request body is: `__proto__` is then an own key of `properties`.
    const schema: unknown = JSON.parse('{"type": "object", "required": ["__proto__", "constructor"], "properties": {"__proto__": {"type": "object", "required": ["polluted"]}}}');
    const value = exampleFromSchema(schema, "x");
    expect(JSON.stringify(value)).toBe('{"__proto__":{"polluted":"x"},"constructor":"x"}');
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
  });
});

describe("code points", () => {
  test("count, cut and split never break a surrogate pair", () => {
    expect(countChars("a😀b")).toBe(3);
    expect(countChars("x".repeat(1000))).toBe(1000);
    expect(cutChars("a😀b", 2)).toBe("a😀");
    expect(cutChars("abc", 5)).toBe("abc");
    expect(splitChars("a😀b😀c", 2)).toEqual(["a😀", "b😀", "c"]);
    expect(splitChars("abcde", 2)).toEqual(["ab", "cd", "e"]);
  });
});

describe("replies", () => {
  const content = (chunks: ChatCompletionChunk[], index: number) =>
    chunks.flatMap((c) => c.choices.filter((choice) => choice.index === index).map((choice) => choice.delta.content ?? "")).join("");

  test("a long text is cut at 16,384 characters with finish_reason length; JSON formats stay whole", async () => {
    const provider = await setupEcho();
    const text = "z".repeat(MAX_TEXT_CHARS + 10);
    const reply = await chat(provider, { messages: [{ role: "user", content: text }] });
    expect(reply.choices[0]).toMatchObject({ finish_reason: "length", message: { content: text.slice(0, MAX_TEXT_CHARS) } });
    const json = await chat(provider, { messages: [{ role: "user", content: text }], response_format: { type: "json_object" } });
    expect(json.choices[0]!.finish_reason).toBe("stop");
    expect(JSON.parse(json.choices[0]!.message.content!)).toEqual({ echo: text.slice(0, MAX_TEXT_CHARS) });
  });

  test("n choices share one budget; a stream has at most 1,024 pieces, larger ones for a long text", async () => {
    const provider = await setupEcho();
    const text = "w".repeat(100_000);
    const reply = await chat(provider, { messages: [{ role: "user", content: text }], n: 128 });
    expect(reply.choices[5]!.message.content).toBe("w".repeat(1_024));
    const chunks = await collect(provider, { messages: [{ role: "user", content: text }], n: 4 });
    const pieces = chunks.filter((c) => c.choices[0]?.delta.content);
    expect(pieces.length).toBeLessThanOrEqual(MAX_STREAM_PIECES);
    expect(content(chunks, 3)).toBe(text.slice(0, MAX_TEXT_CHARS));
    // A short text keeps chunk_size.
    const short = await collect(provider, { messages: [{ role: "user", content: "0123456789abcdef" }] });
    expect(short.filter((c) => c.choices[0]?.delta.content).map((c) => c.choices[0]!.delta.content)).toEqual(["01234567", "89abcdef"]);
  });

  test("a tool is mentioned by a whole word, any case; with many tools the first in order wins", async () => {
    const provider = await setupEcho();
    const tools: FunctionTool[] = ["get_weather", "get-time", "lookup"].map((name) => ({ type: "function", function: { name } }));
    const called = async (content: string) => (await chat(provider, { messages: [{ role: "user", content }], tools })).choices[0]!.message.tool_calls?.[0]?.function.name ?? null;
    expect(await called("please LOOKUP then Get_Weather.")).toBe("get_weather");
    expect(await called("get_weathers and x-lookup and get-time-zone")).toBeNull();
    expect(await called("what is get-time?")).toBe("get-time");
    expect(await called("é lookup😀")).toBe("lookup");
  });

  test("Responses API: an id with broken percent-encoding is unknown (404), not a URIError", async () => {
    const responses = createEchoResponses({ name: "echo", prefix: "", chunkSize: 8 });
    for (const path of ["/responses/%E0%A4%A", "/responses/%", "/responses/%ZZ/input_items"]) {
      await expect(responses({ method: "GET", path, stream: false }), path).rejects.toMatchObject({ status: 404 });
    }
  });

  test("an image's revised_prompt is bounded like text", () => {
    const reply = generateImages({ model: "echo-1", prompt: "p".repeat(100_000), n: 10 });
    expect(reply.data.every((image) => image.revised_prompt === "p".repeat(MAX_TEXT_CHARS))).toBe(true);
  });

  test("the same request gives the same bounded reply", async () => {
    const provider = await setupEcho();
    const fields = { messages: [{ role: "user" as const, content: "x".repeat(50_000) }], response_format: { type: "json_schema" as const, json_schema: { name: "r", schema: { type: "array", minItems: 1e7 } } } };
    const [a, b] = [await provider.chat({ model: "echo-1", ...fields }, call()), await provider.chat({ model: "echo-1", ...fields }, call())];
    expect(a.choices).toEqual(b.choices);
  });
});
