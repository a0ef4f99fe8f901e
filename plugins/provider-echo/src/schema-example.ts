/**
 * Builds a small value that fits a JSON Schema, for tool-call arguments and `json_schema` replies.
 * Strings are filled with the text the echo model was given, so a test can see where its input went.
 *
 * The schema comes from the request, so what it asks for is bounded (`bounds.ts`): items, properties,
 * depth, and a budget of characters for the whole value. Each step spends from the budget; once it
 * is spent, arrays and objects stop growing and strings come out empty. The work is then bounded
 * too: every step spends, and nothing is read in full that the request could make long (`required`,
 * `type` lists, `$ref` paths are read once or up to a cap).
 */
import type { JsonObject } from "@modelmux/core";
import { MAX_EXAMPLE_DEPTH, MAX_EXAMPLE_ITEMS, MAX_EXAMPLE_PROPERTIES, MAX_TEXT_CHARS } from "./bounds.ts";
import { cutChars } from "./chars.ts";

/** One example being built: its schema's root, its text, what is left of its budget. */
interface Build {
  root: JsonObject;
  text: string;
  /** Characters the value may still take, about as `JSON.stringify` writes them. */
  budget: number;
  /**
   * Local `$ref`s resolved so far, by the schema that holds them: a schema met again (an array's
   * `items`) is not resolved again, and no long ref string is ever hashed.
   */
  refs: Map<JsonObject, unknown>;
}

/** The JSON Schema `type` names; a `type` list longer than this repeats one. */
const TYPE_NAMES = 7;

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** An own property: `__proto__` or `constructor` as a key must not reach the prototype. */
function own(object: JsonObject, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** A JSON Pointer segment of a `$ref` fragment: percent-decoded, then `~1` and `~0`; undefined when its escapes are broken. */
function pointerKey(raw: string): string | undefined {
  let key: string;
  try {
    key = decodeURIComponent(raw);
  } catch {
    return undefined; // `%`, `%E0%A4%A`: no key can have that name.
  }
  return key.replaceAll("~1", "/").replaceAll("~0", "~");
}

/**
 * Resolves a local `$ref` (`#/$defs/Name`, `#/definitions/Name`) against the root schema, once per
 * holder. A ref that leads nowhere (not local, a missing key, broken percent-encoding) resolves to
 * undefined: the value is then built as for a schema that allows anything.
 */
function resolveRef(holder: JsonObject, ref: string, b: Build): unknown {
  if (b.refs.has(holder)) return b.refs.get(holder);
  let node: unknown = undefined;
  if (ref.startsWith("#")) {
    node = b.root;
    // Segment by segment, stopping at the first that leads nowhere: a long path costs no more than
    // the levels the schema really has (no split of the whole path).
    for (let start = 1; start <= ref.length && node !== undefined; ) {
      let end = ref.indexOf("/", start);
      if (end < 0) end = ref.length;
      if (end > start) {
        const key = pointerKey(ref.slice(start, end));
        node = key !== undefined && isObject(node) ? own(node, key) : undefined;
      }
      start = end + 1;
    }
  }
  b.refs.set(holder, node);
  return node;
}

function schemaType(schema: JsonObject): unknown {
  const { type } = schema;
  if (Array.isArray(type)) {
    for (let i = 0; i < type.length && i < TYPE_NAMES; i++) if (type[i] !== "null") return type[i];
    return "null";
  }
  if (type !== undefined) return type;
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

/**
 * The size of `value` as JSON, roughly, or `limit + 1` as soon as it is larger. Iterative and
 * stopping early, so a large `const` costs no more than the budget it is measured against.
 */
function sizeWithin(value: unknown, limit: number): number {
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === "string") size += item.length + 2;
    else if (Array.isArray(item)) {
      size += item.length + 2;
      if (size <= limit) for (const element of item) stack.push(element);
    } else if (isObject(item)) {
      size += 2;
      for (const key in item) {
        size += key.length + 4;
        if (size > limit) break;
        stack.push(item[key]);
      }
    } else size += String(item).length;
    if (size > limit) return limit + 1;
  }
  return size;
}

/** A value the schema gives (`const`, `enum`): as it is when it fits the budget, else `null`. */
function given(value: unknown, b: Build): unknown {
  const size = sizeWithin(value, b.budget);
  if (size > b.budget) {
    b.budget -= 4;
    return null;
  }
  b.budget -= size;
  return value;
}

function buildString(schema: JsonObject, b: Build): string {
  let max = Math.max(0, b.budget - 2);
  if (typeof schema.maxLength === "number" && schema.maxLength < max) max = Math.max(0, schema.maxLength);
  const value = cutChars(b.text, max);
  b.budget -= value.length + 2;
  return value;
}

function buildObject(schema: JsonObject, b: Build, depth: number): JsonObject {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required : [];
  const value: JsonObject = {};
  b.budget -= 2;
  for (let i = 0; i < required.length && i < MAX_EXAMPLE_PROPERTIES && b.budget > 0; i++) {
    const key = required[i];
    if (typeof key !== "string") continue;
    b.budget -= key.length + 4;
    const property = build(own(properties, key), b, depth + 1);
    // `__proto__` is an own key in JSON; assigned, it would set the prototype instead.
    if (key === "__proto__") Object.defineProperty(value, key, { value: property, enumerable: true, writable: true, configurable: true });
    else value[key] = property;
  }
  return value;
}

function buildArray(schema: JsonObject, b: Build, depth: number): unknown[] {
  const minItems = typeof schema.minItems === "number" && schema.minItems > 0 ? schema.minItems : 0;
  const count = Math.min(minItems, MAX_EXAMPLE_ITEMS);
  const value: unknown[] = [];
  b.budget -= 2;
  while (value.length < count && b.budget > 0) {
    b.budget -= 1;
    value.push(build(schema.items, b, depth + 1));
  }
  return value;
}

function build(schema: unknown, b: Build, depth: number): unknown {
  if (depth >= MAX_EXAMPLE_DEPTH) {
    b.budget -= 4;
    return null;
  }
  // A missing or `true` schema allows anything; text is the most useful thing to show.
  if (!isObject(schema)) return buildString({}, b);
  if (typeof schema.$ref === "string") return build(resolveRef(schema, schema.$ref, b), b, depth + 1);
  if ("const" in schema) return given(schema.const, b);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return given(schema.enum[0], b);
  for (const key of ["anyOf", "oneOf", "allOf"] as const) {
    const branches = schema[key];
    if (Array.isArray(branches) && branches.length > 0) return build(branches[0], b, depth + 1);
  }
  const type = schemaType(schema);
  switch (type) {
    case "object":
      return buildObject(schema, b, depth);
    case "array":
      return buildArray(schema, b, depth);
    case "integer":
    case "number":
      return given(lowestNumber(schema, type === "integer"), b);
    case "boolean":
      b.budget -= 5;
      return false;
    case "null":
      b.budget -= 4;
      return null;
    default:
      return buildString(schema, b);
  }
}

/**
 * A deterministic value for `schema`: `const`, else the first `enum` value, else the first branch of
 * `anyOf`/`oneOf`/`allOf`; objects get only their `required` properties; strings are `text` (cut to
 * `maxLength`); numbers and integers are `minimum` (or 0, kept under `maximum`); booleans `false`;
 * arrays have `minItems` items (or none); local `$ref`s are followed. Bounded (`bounds.ts`): at most
 * 8 items, 100 properties, 16 levels, and about `maxChars` characters of JSON in all.
 * @example
 * exampleFromSchema({ type: "object", properties: { city: { type: "string" }, days: { type: "integer" } },
 *   required: ["city", "days"] }, "Paris") // { city: "Paris", days: 0 }
 */
export function exampleFromSchema(schema: unknown, text: string, maxChars = MAX_TEXT_CHARS): unknown {
  const b: Build = { root: isObject(schema) ? schema : {}, text: cutChars(text, maxChars), budget: maxChars, refs: new Map() };
  return build(schema, b, 0);
}
