/**
 * Builds a small value that fits a JSON Schema, for tool-call arguments and `json_schema` replies.
 * Strings are filled with the text the echo model was given, so a test can see where its input went.
 */
import type { JsonObject } from "@modelmux/core";

/** Deeper schemas than this are cut off with `null`, which also ends recursive `$ref`s. */
const MAX_DEPTH = 16;

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Resolves a local `$ref` (`#/$defs/Name`, `#/definitions/Name`) against the root schema. */
function resolveRef(ref: string, root: JsonObject): unknown {
  if (!ref.startsWith("#")) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(1).split("/").filter(Boolean)) {
    const key = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
    node = isObject(node) ? node[key] : undefined;
  }
  return node;
}

function schemaType(schema: JsonObject): unknown {
  if (Array.isArray(schema.type)) return schema.type.find((t) => t !== "null") ?? "null";
  if (schema.type !== undefined) return schema.type;
  return isObject(schema.properties) ? "object" : undefined;
}

/** `minimum` (or just above `exclusiveMinimum`), else 0, kept under `maximum`. */
function lowestNumber(schema: JsonObject, integer: boolean): number {
  const { minimum, exclusiveMinimum, maximum } = schema;
  let value = 0;
  if (typeof minimum === "number") value = integer ? Math.ceil(minimum) : minimum;
  else if (typeof exclusiveMinimum === "number") value = integer ? Math.floor(exclusiveMinimum) + 1 : exclusiveMinimum + 1;
  if (typeof maximum === "number" && value > maximum) value = integer ? Math.floor(maximum) : maximum;
  return value;
}

function build(schema: unknown, text: string, root: JsonObject, depth: number): unknown {
  if (depth > MAX_DEPTH) return null;
  // A missing or `true` schema allows anything; text is the most useful thing to show.
  if (!isObject(schema)) return text;
  if (typeof schema.$ref === "string") return build(resolveRef(schema.$ref, root), text, root, depth + 1);
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const key of ["anyOf", "oneOf", "allOf"] as const) {
    const branches = schema[key];
    if (Array.isArray(branches) && branches.length > 0) return build(branches[0], text, root, depth + 1);
  }
  const type = schemaType(schema);
  switch (type) {
    case "object": {
      const properties = isObject(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required) ? schema.required.filter((k): k is string => typeof k === "string") : [];
      const value: JsonObject = {};
      for (const key of required) value[key] = build(properties[key], text, root, depth + 1);
      return value;
    }
    case "array": {
      const count = typeof schema.minItems === "number" ? schema.minItems : 0;
      return Array.from({ length: count }, () => build(schema.items, text, root, depth + 1));
    }
    case "integer":
    case "number":
      return lowestNumber(schema, type === "integer");
    case "boolean":
      return false;
    case "null":
      return null;
    case "string":
      return typeof schema.maxLength === "number" ? Array.from(text).slice(0, schema.maxLength).join("") : text;
    default:
      return text;
  }
}

/**
 * A deterministic value for `schema`: `const`, else the first `enum` value, else the first branch of
 * `anyOf`/`oneOf`/`allOf`; objects get only their `required` properties; strings are `text` (cut to
 * `maxLength`); numbers and integers are `minimum` (or 0, kept under `maximum`); booleans `false`; arrays have `minItems`
 * items (or none); local `$ref`s are followed.
 * @example
 * exampleFromSchema({ type: "object", properties: { city: { type: "string" }, days: { type: "integer" } },
 *   required: ["city", "days"] }, "Paris") // { city: "Paris", days: 0 }
 */
export function exampleFromSchema(schema: unknown, text: string): unknown {
  return build(schema, text, isObject(schema) ? schema : {}, 0);
}
