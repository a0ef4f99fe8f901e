/**
 * The wording of each Ajv keyword's error. Ajv's own messages (`must NOT have more than 4 items`,
 * `must be equal to one of the allowed values`) hide the limit or the allowed values; ours name them.
 */
import type { ErrorObject } from "ajv";
import { closestName } from "../utils/closest-name.ts";
import type { ValidationErrorCode } from "./ajv.ts";

/** What an error says: the rule broken, and the key it concerns below the error's own path. */
export interface DescribedRule {
  /** A key to append to the error's path: the missing, the unknown or the badly named property. */
  field?: string;
  rule: string;
  code: ValidationErrorCode;
}

const ARTICLE: Record<string, string> = {
  string: "a string",
  number: "a number",
  integer: "an integer",
  boolean: "a boolean",
  object: "an object",
  array: "an array",
  null: "null",
};

// Formats whose names are not words; the others read well as they are ("a date-time").
const FORMAT_NAMES: Record<string, string> = { uri: "a URL", url: "a URL", "http-url": "an http(s) URL", "uri-reference": "a URI reference", email: "an email address" };

/**
 * Describes one Ajv error. Params are read defensively: custom keywords may carry their own.
 * @param siblings Names known beside the schema's own properties (a provider block's core keys,
 *   next to its plugin's options), offered by "did you mean" too.
 */
export function describeRule(error: ErrorObject, siblings: readonly string[] = []): DescribedRule {
  const p = error.params as Record<string, unknown>;
  // An error inside `propertyNames` concerns the key itself, which Ajv names here.
  if (error.propertyName !== undefined) {
    return { field: error.propertyName, rule: `key ${describeValueRule(error.keyword, p, error.message)}`, code: "invalid_value" };
  }
  switch (error.keyword) {
    case "required":
      return { field: String(p.missingProperty), rule: `is required${typoOf(String(p.missingProperty), error)}`, code: "missing_field" };
    case "dependencies":
    case "dependentRequired":
      return { field: String(p.missingProperty), rule: `is required when ${String(p.property)} is present`, code: "missing_field" };
    case "additionalProperties":
    case "unevaluatedProperties": {
      const field = String(p.additionalProperty ?? p.unevaluatedProperty);
      const near = closestName(field, [...knownKeys(error), ...siblings]);
      return { field, rule: `is not a known field${near ? `; did you mean ${near}?` : ""}`, code: "unknown_field" };
    }
    default:
      return { rule: describeValueRule(error.keyword, p, error.message), code: "invalid_value" };
  }
}

/**
 * The keys a schema defines where the error is: read from the error's `parentSchema`, which Ajv
 * gives in `verbose` mode (the config's and plugin options' validators) and not otherwise (request
 * bodies, whose messages stay without suggestions).
 */
function knownKeys(error: ErrorObject): string[] {
  const properties = (error.parentSchema as { properties?: unknown } | undefined)?.properties;
  return properties && typeof properties === "object" ? Object.keys(properties) : [];
}

/** For a missing key, a present key that looks like a typo of it (`modles` for `models`), in `verbose` mode. */
function typoOf(missing: string, error: ErrorObject): string {
  const data = error.data;
  if (!data || typeof data !== "object" || Array.isArray(data)) return "";
  const near = closestName(missing, Object.keys(data).filter((key) => !knownKeys(error).includes(key)));
  return near ? ` (is ${near} a typo of it?)` : "";
}

function describeValueRule(keyword: string, p: Record<string, unknown>, ajvMessage: string | undefined): string {
  switch (keyword) {
    case "type":
      return `must be ${orList(([] as unknown[]).concat(p.type).map((t) => ARTICLE[String(t)] ?? String(t)))}`;
    case "enum":
      return describeEnum(p.allowedValues as unknown[]);
    case "const":
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case "maximum":
    case "minimum":
    case "exclusiveMaximum":
    case "exclusiveMinimum":
      return `must be ${String(p.comparison)} ${String(p.limit)}`;
    case "maxLength":
      return `must be at most ${plural(p.limit, "character")}`;
    case "minLength":
      return `must be at least ${plural(p.limit, "character")}`;
    case "maxItems":
      return `must have at most ${plural(p.limit, "item")}`;
    case "minItems":
      return `must have at least ${plural(p.limit, "item")}`;
    case "maxProperties":
      return `must have at most ${plural(p.limit, "property", "properties")}`;
    case "minProperties":
      return `must have at least ${plural(p.limit, "property", "properties")}`;
    case "pattern":
      return `must match the pattern ${String(p.pattern)}`;
    case "format":
      return `must be ${FORMAT_NAMES[String(p.format)] ?? `a valid ${String(p.format)}`}`;
    case "multipleOf":
      return `must be a multiple of ${String(p.multipleOf)}`;
    case "uniqueItems":
      return `must not contain duplicates (items ${String(p.j)} and ${String(p.i)} are equal)`;
    case "anyOf":
    case "oneOf":
      return "must match one of the allowed forms";
    default:
      // `not`, `contains`, `if` and custom keywords: Ajv's (or the keyword's) own wording.
      return ajvMessage ?? `is invalid (${keyword})`;
  }
}

function describeEnum(values: unknown[]): string {
  const listed = values.filter((v) => v !== null).map((v) => (typeof v === "string" ? v : JSON.stringify(v)));
  return `must be one of ${listed.join(", ")}${values.includes(null) ? ", or null" : ""}`;
}

function orList(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`;
}

function plural(count: unknown, one: string, many = `${one}s`): string {
  return `${String(count)} ${count === 1 ? one : many}`;
}
