/**
 * The body of `POST /v1/chat/completions`, with the interface's limits (docs/interface.md,
 * "Request bodies"). Unknown top-level fields are rejected (`unknown_field`): the body is
 * translated for every provider, so a field the core does not know would be dropped silently —
 * better a clear 400 naming it. A new field goes here and in `ChatRequest` (types/chat.ts) together.
 */
import type { ChatRequest } from "../types/chat.ts";
import type { CrossFieldRule } from "../validation/ajv.ts";
import type { JsonSchema } from "../plugin.ts";
import { chatMessage, contentPart } from "./chat-message.ts";
import {
  TOOL_CHOICE_MODES,
  functionName,
  metadata,
  nullableBoolean,
  nullableCount,
  nullableEnum,
  nullableNumber,
  nullableObject,
  nullableString,
  temperature,
} from "./common.ts";

/**
 * The interface lists low, medium and high. `minimal` is accepted too: `ChatRequest` already types
 * it, the chat interface mirrors OpenAI's (docs/interface.md), where gpt-5 models
 * take it, and the `reasoning_effort` capability still refuses it for models that lack the feature.
 */
export const REASONING_EFFORTS = ["minimal", "low", "medium", "high"] as const;

const penalty: JsonSchema = { type: ["number", "null"], minimum: -2, maximum: 2 };

const functionTool: JsonSchema = {
  type: "object",
  required: ["type", "function"],
  properties: {
    // "only functions are supported" (interface): other tool types would have no translation.
    type: { const: "function" },
    function: {
      type: "object",
      required: ["name"],
      properties: { name: functionName, description: nullableString, parameters: nullableObject, strict: nullableBoolean },
    },
  },
};

const toolChoice: JsonSchema = {
  type: ["string", "object", "null"],
  // A string must be a mode; the object keywords below apply to objects only.
  if: { type: "string" },
  then: { enum: [...TOOL_CHOICE_MODES] },
  required: ["type", "function"],
  properties: {
    type: { const: "function" },
    function: { type: "object", required: ["name"], properties: { name: { type: "string" } } },
  },
};

const responseFormat: JsonSchema = {
  type: ["object", "null"],
  required: ["type"],
  properties: { type: { type: "string", enum: ["text", "json_object", "json_schema"] } },
  if: { required: ["type"], properties: { type: { const: "json_schema" } } },
  then: {
    required: ["json_schema"],
    properties: {
      json_schema: {
        type: "object",
        required: ["name"],
        properties: { name: functionName, description: nullableString, schema: nullableObject, strict: nullableBoolean },
      },
    },
  },
};

export const chatRequestSchema: JsonSchema = {
  type: "object",
  required: ["model", "messages"],
  additionalProperties: false,
  properties: {
    model: { type: "string" },
    messages: { type: "array", minItems: 1, items: chatMessage },
    audio: {
      type: ["object", "null"],
      required: ["format", "voice"],
      properties: { format: { type: "string" }, voice: { type: "string" } },
    },
    modalities: { type: ["array", "null"], items: { type: "string" } },
    frequency_penalty: penalty,
    presence_penalty: penalty,
    logit_bias: {
      type: ["object", "null"],
      // Keys are token ids.
      propertyNames: { pattern: "^[0-9]+$" },
      additionalProperties: { type: "number", minimum: -100, maximum: 100 },
    },
    logprobs: nullableBoolean,
    top_logprobs: { type: ["integer", "null"], minimum: 0, maximum: 20 },
    max_completion_tokens: nullableCount,
    max_tokens: nullableCount,
    metadata,
    // The interface sets only >= 0; 128 is OpenAI's own ceiling, and without one a single request
    // could make a reply of any size.
    n: { type: ["integer", "null"], minimum: 0, maximum: 128 },
    parallel_tool_calls: nullableBoolean,
    prediction: {
      type: ["object", "null"],
      required: ["type", "content"],
      properties: { type: { type: "string" }, content: { type: ["string", "array"], items: contentPart } },
    },
    prompt_cache_key: nullableString,
    reasoning_effort: nullableEnum(REASONING_EFFORTS),
    response_format: responseFormat,
    seed: { type: ["integer", "null"] },
    // The interface names `auto` and `default`; OpenAI also has `flex`, `priority`, `scale`. The value
    // is the provider's business, so any string passes.
    service_tier: nullableString,
    stop: { type: ["string", "array", "null"], maxItems: 4, items: { type: "string" } },
    store: nullableBoolean,
    stream: nullableBoolean,
    // Open: OpenAI has added fields here (`include_obfuscation`) that a client may send.
    stream_options: { type: ["object", "null"], properties: { include_usage: nullableBoolean } },
    temperature,
    top_p: nullableNumber,
    tool_choice: toolChoice,
    tools: { type: ["array", "null"], items: functionTool },
    user: nullableString,
  },
};

const isSet = (value: unknown): boolean => value !== undefined && value !== null;

/** The rules between chat fields, checked after the schema (see `CrossFieldRule` for why). */
export const chatRequestRules: readonly CrossFieldRule<ChatRequest>[] = [
  {
    param: "top_logprobs",
    message: "requires logprobs to be true",
    isBroken: (r) => isSet(r.top_logprobs) && r.logprobs !== true,
  },
  {
    param: "stream_options",
    message: "requires stream to be true",
    isBroken: (r) => isSet(r.stream_options) && r.stream !== true,
  },
  {
    param: "audio",
    message: 'is required when modalities includes "audio"',
    code: "missing_field",
    isBroken: (r) => (r.modalities ?? []).includes("audio") && !isSet(r.audio),
  },
];
