/**
 * A message of a chat request (docs/interface.md, "Request bodies"). Text and
 * image parts are checked field by field; other part types (`input_audio`, `file`, …) only need a
 * string `type`, since the capability check and the provider decide what they support. Extra
 * fields on a message or a part are allowed: OpenAI's five message variants carry more
 * (`refusal`, `audio`, `function_call`), and clients add vendor fields such as `cache_control`.
 */
import type { JsonSchema } from "../plugin.ts";
import { nullableString } from "./common.ts";

/** `function` is OpenAI's legacy role for function results; still accepted, as OpenAI does. */
export const CHAT_ROLES = ["developer", "system", "user", "assistant", "tool", "function"] as const;

/** `if` clause: the object's `key` equals `value` (and is present: an absent key would pass). */
function whenEquals(key: string, value: string): JsonSchema {
  return { required: [key], properties: { [key]: { const: value } } };
}

const imageUrl: JsonSchema = {
  type: "object",
  required: ["url"],
  properties: {
    // A URL or a `data:` URL with base64 data; no format check, which would scan megabytes of base64.
    url: { type: "string", minLength: 1 },
    detail: { type: ["string", "null"], enum: ["auto", "low", "high", null] },
  },
};

/** One part of an array `content`. */
export const contentPart: JsonSchema = {
  type: "object",
  required: ["type"],
  properties: { type: { type: "string" } },
  allOf: [
    { if: whenEquals("type", "text"), then: { required: ["text"], properties: { text: { type: "string" } } } },
    { if: whenEquals("type", "image_url"), then: { required: ["image_url"], properties: { image_url: imageUrl } } },
  ],
};

const toolCall: JsonSchema = {
  type: "object",
  required: ["id", "type", "function"],
  properties: {
    id: { type: "string" },
    type: { const: "function" },
    function: {
      type: "object",
      required: ["name", "arguments"],
      properties: { name: { type: "string" }, arguments: { type: "string" } },
    },
  },
};

/** Content that must be present: a string or an array of parts, not null. */
const requiredContent: JsonSchema = { required: ["content"], properties: { content: { type: ["string", "array"] } } };

export const chatMessage: JsonSchema = {
  type: "object",
  required: ["role"],
  properties: {
    role: { type: "string", enum: [...CHAT_ROLES] },
    content: { type: ["string", "array", "null"], items: contentPart },
    name: nullableString,
    tool_call_id: nullableString,
    tool_calls: { type: ["array", "null"], items: toolCall },
  },
  allOf: [
    { if: { required: ["role"], properties: { role: { enum: ["developer", "system", "user"] } } }, then: requiredContent },
    {
      if: whenEquals("role", "tool"),
      then: { required: ["tool_call_id", "content"], properties: { tool_call_id: { type: "string" }, content: { type: ["string", "array"] } } },
    },
    {
      // OpenAI: an assistant's content is "required unless tool_calls or function_call is specified".
      if: {
        required: ["role"],
        properties: { role: { const: "assistant" }, tool_calls: { not: { type: "array", minItems: 1 } }, function_call: { type: "null" } },
      },
      then: requiredContent,
    },
    { if: whenEquals("role", "function"), then: { required: ["name"], properties: { name: { type: "string" } } } },
  ],
};
