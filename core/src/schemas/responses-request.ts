/**
 * The body of `POST /v1/responses` (docs/interface.md, "Request bodies"). The body is
 * forwarded one-to-one to the responses provider, so unknown fields pass (`additionalProperties`
 * is left open): the provider knows fields this schema does not, and it validates them itself.
 * Only `model` is required; every other field is optional and nullable.
 */
import type { JsonSchema } from "../plugin.ts";
import {
  TOOL_CHOICE_MODES,
  nullableBoolean,
  nullableInt32Count,
  nullableNumber,
  nullableObject,
  nullableString,
  temperature,
} from "./common.ts";

/** What the core reads of a responses request; the rest is forwarded untouched. */
export interface ResponsesRequest {
  model: string;
  stream?: boolean | null;
  background?: boolean | null;
  max_output_tokens?: number | null;
  [field: string]: unknown;
}

// Input items and instruction items have many forms (message, structured item, item reference);
// the provider checks them. Here they need only be objects.
const items: JsonSchema = { type: ["string", "array", "null"], items: { type: "object" } };

const tool: JsonSchema = {
  type: "object",
  required: ["type"],
  properties: { type: { type: "string" } },
  if: { required: ["type"], properties: { type: { const: "function" } } },
  then: {
    required: ["name"],
    properties: { name: { type: "string" }, description: nullableString, parameters: nullableObject, strict: nullableBoolean },
  },
};

const toolChoice: JsonSchema = {
  type: ["string", "object", "null"],
  if: { type: "string" },
  then: { enum: [...TOOL_CHOICE_MODES] },
  // "an object naming a tool": hosted tools, `function`, `mcp`, `allowed_tools` all carry a `type`.
  required: ["type"],
  properties: { type: { type: "string" } },
};

export const responsesRequestSchema: JsonSchema = {
  type: "object",
  required: ["model"],
  properties: {
    model: { type: "string" },
    input: items,
    instructions: items,
    background: nullableBoolean,
    conversation: { type: ["string", "object", "null"] },
    include: { type: ["array", "null"] },
    max_output_tokens: nullableInt32Count,
    max_tool_calls: nullableInt32Count,
    top_logprobs: nullableInt32Count,
    // Free-form in the interface: objects of any shape.
    metadata: nullableObject,
    prompt: nullableObject,
    reasoning: nullableObject,
    text: nullableObject,
    stream_options: nullableObject,
    parallel_tool_calls: nullableBoolean,
    store: nullableBoolean,
    stream: nullableBoolean,
    previous_response_id: nullableString,
    prompt_cache_key: nullableString,
    safety_identifier: nullableString,
    truncation: nullableString,
    service_tier: nullableString,
    temperature,
    top_p: nullableNumber,
    tool_choice: toolChoice,
    tools: { type: ["array", "null"], items: tool },
  },
};
