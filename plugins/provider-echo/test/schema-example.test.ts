import { expect, test } from "vitest";
import { exampleFromSchema } from "../src/schema-example.ts";

test("fills only required properties, strings with the text", () => {
  const schema = { type: "object", properties: { a: { type: "string" }, b: { type: "string" } }, required: ["a"] };
  expect(exampleFromSchema(schema, "hi")).toEqual({ a: "hi" });
  expect(exampleFromSchema({ type: "object", properties: { a: { type: "string" } } }, "hi")).toEqual({});
});

test("prefers const and enum, then the first branch", () => {
  expect(exampleFromSchema({ type: "string", const: "fixed" }, "hi")).toBe("fixed");
  expect(exampleFromSchema({ type: "integer", enum: [3, 4] }, "hi")).toBe(3);
  expect(exampleFromSchema({ oneOf: [{ type: "boolean" }, { type: "string" }] }, "hi")).toBe(false);
  expect(exampleFromSchema({ type: ["null", "integer"] }, "hi")).toBe(0);
});

test("keeps numbers inside their bounds", () => {
  expect(exampleFromSchema({ type: "integer", exclusiveMinimum: 0.5 }, "")).toBe(1);
  expect(exampleFromSchema({ type: "number", minimum: 2.5 }, "")).toBe(2.5);
  expect(exampleFromSchema({ type: "integer", maximum: -3 }, "")).toBe(-3);
});

test("ends recursive $refs", () => {
  const schema = { $ref: "#/$defs/node", $defs: { node: { type: "object", properties: { child: { $ref: "#/$defs/node" } }, required: ["child"] } } };
  const value = JSON.stringify(exampleFromSchema(schema, "x"));
  expect(value).toMatch(/^\{"child":\{"child":/);
  expect(value).toContain("null");
});
