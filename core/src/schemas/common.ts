/**
 * Schema pieces shared by the request bodies. Every optional field also accepts null
 * (docs/interface.md, "Conventions"), hence the `"null"` in each type.
 */
import type { JsonSchema } from "../plugin.ts";

export const nullableString: JsonSchema = { type: ["string", "null"] };
export const nullableBoolean: JsonSchema = { type: ["boolean", "null"] };
export const nullableNumber: JsonSchema = { type: ["number", "null"] };
export const nullableObject: JsonSchema = { type: ["object", "null"] };

/** Limits: "integer token and count fields >= 0". */
export const nullableCount: JsonSchema = { type: ["integer", "null"], minimum: 0 };

/** The responses interface types its counts as int32 (`max_output_tokens`, `max_tool_calls`, `top_logprobs`). */
export const nullableInt32Count: JsonSchema = { type: ["integer", "null"], minimum: 0, maximum: 2_147_483_647 };

/** Limits: "temperature 0 to 2", for chat and responses alike. */
export const temperature: JsonSchema = { type: ["number", "null"], minimum: 0, maximum: 2 };

/** A string-valued enum that may also be null. */
export function nullableEnum(values: readonly string[]): JsonSchema {
  return { type: ["string", "null"], enum: [...values, null] };
}

/**
 * Stored-completion metadata, on chat create and on update (Limits: 16 pairs, keys up to 64
 * characters, values strings up to 512 characters). Ajv counts characters as code points.
 */
export const metadata: JsonSchema = {
  type: ["object", "null"],
  maxProperties: 16,
  propertyNames: { maxLength: 64 },
  additionalProperties: { type: "string", maxLength: 512 },
};

/** OpenAI's rule for function and JSON-schema names, so a bad name fails here rather than upstream. */
export const functionName: JsonSchema = { type: "string", pattern: "^[a-zA-Z0-9_-]{1,64}$" };

/** `tool_choice` as a string: the same three modes on chat and responses. */
export const TOOL_CHOICE_MODES = ["none", "auto", "required"] as const;
