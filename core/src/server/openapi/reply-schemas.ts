/**
 * The JSON Schemas of the router's replies, for the OpenAPI document (docs/interface.md, "OpenAPI
 * description"). What the router makes itself (the error envelope, the normalised chat completion,
 * stored completions and their lists, the models list, the image and embeddings results) is closed with
 * `additionalProperties: false`, so the reply test (test/openapi-replies.test.ts) notices a field
 * added to a reply but not here. What it relays as a provider wrote it (stream chunks, the
 * Responses API) is open. Each schema uses only keywords that mean the same in JSON Schema draft-07
 * (the router's Ajv) and 2020-12 (OpenAPI 3.1's dialect).
 */
import type { JsonSchema } from "../../plugin.ts";
import type { ErrorType } from "../../errors.ts";
import { CHAT_ROLES } from "../../schemas/chat-message.ts";
import { metadata } from "../../schemas/common.ts";
import type { FinishReason } from "../../types/chat.ts";

/** A `$ref` to another schema of the document. */
export function schemaRef(name: string): JsonSchema {
  return { $ref: `#/components/schemas/${name}` };
}

// Records keyed by the TypeScript unions, so a value added to one fails the type check until it is here too.
const ERROR_TYPES: Record<ErrorType, true> = { invalid_request_error: true, api_error: true, rate_limit_error: true, permission_error: true };
const FINISH_REASONS: Record<FinishReason, true> = { stop: true, length: true, tool_calls: true, content_filter: true, error: true };

const string: JsonSchema = { type: "string" };
const nullableString: JsonSchema = { type: ["string", "null"] };
const count: JsonSchema = { type: "integer", minimum: 0 };
const unixSeconds: JsonSchema = { type: "integer", minimum: 0, description: "Unix time in seconds." };
const freeForm: JsonSchema = { type: "object" };

/** A closed object: every property listed, `required` the ones always present. */
function closed(required: readonly string[], properties: Record<string, JsonSchema>, description?: string): JsonSchema {
  return { type: "object", ...(description && { description }), required: [...required], additionalProperties: false, properties };
}

const errorEnvelope = closed(
  ["error"],
  {
    error: closed(["message", "type", "code", "param"], {
      message: string,
      type: { type: "string", enum: Object.keys(ERROR_TYPES) },
      code: { type: ["string", "null"], description: "One per situation; docs/interface.md, \"Errors\", lists them." },
      param: { type: ["string", "null"], description: "The request field the error is about, e.g. `messages[0].content`." },
    }),
  },
  "Every error reply, and the error event that ends a chat stream that fails after its first event.",
);

const usage = closed(["prompt_tokens", "completion_tokens", "total_tokens"], {
  prompt_tokens: count,
  completion_tokens: count,
  total_tokens: count,
  prompt_tokens_details: { type: ["object", "null"] },
  completion_tokens_details: { type: ["object", "null"] },
});

const toolCall = closed(["id", "type", "function"], {
  id: string,
  type: { const: "function" },
  function: closed(["name", "arguments"], { name: string, arguments: { type: "string", description: "JSON text." } }),
});

const finishReason: JsonSchema = { type: "string", enum: Object.keys(FINISH_REASONS) };

const choice = closed(["index", "finish_reason", "message"], {
  index: count,
  finish_reason: finishReason,
  native_finish_reason: { type: "string", description: "The provider's own reason, when it has another name." },
  message: closed(["role"], {
    role: { const: "assistant" },
    content: nullableString,
    refusal: nullableString,
    tool_calls: { type: "array", items: schemaRef("ChatCompletionMessageToolCall") },
    annotations: { type: "array" },
    audio: { type: ["object", "null"] },
  }),
  logprobs: { type: ["object", "null"] },
});

/** The normalised chat completion's properties, shared by the stored one. */
const completionProperties: Record<string, JsonSchema> = {
  id: string,
  object: { const: "chat.completion" },
  created: unixSeconds,
  model: string,
  choices: { type: "array", items: choice },
  usage: { ...schemaRef("CompletionUsage"), description: "Absent when the provider reported none: never made up." },
  service_tier: { type: ["string", "null"], description: "Only when the request set `service_tier`." },
  system_fingerprint: nullableString,
};
const completionRequired = ["id", "object", "created", "model", "choices"];

const chunk: JsonSchema = {
  type: "object",
  description:
    "One chunk of a streamed chat completion. A provider's chunk is relayed as it wrote it once it passed the router's check (docs/interface.md, \"Chat streams\"), so fields beyond these may come.",
  required: ["choices"],
  properties: {
    id: string,
    object: { const: "chat.completion.chunk" },
    created: unixSeconds,
    model: string,
    choices: {
      type: "array",
      items: {
        type: "object",
        properties: {
          index: count,
          delta: {
            type: "object",
            properties: {
              role: string,
              content: nullableString,
              refusal: nullableString,
              tool_calls: { type: "array", items: { type: "object", required: ["index"], properties: { index: count, id: string, type: { const: "function" }, function: freeForm } } },
            },
          },
          finish_reason: { type: ["string", "null"], description: "stop, length, tool_calls, content_filter or error; null until the choice ends." },
          native_finish_reason: string,
          logprobs: { type: ["object", "null"] },
        },
      },
    },
    usage: {
      type: ["object", "null"],
      description: "In the last chunk (`choices: []`), only with `stream_options.include_usage`.",
      properties: { prompt_tokens: count, completion_tokens: count, total_tokens: count },
    },
    service_tier: nullableString,
    system_fingerprint: nullableString,
  },
};

/** `{object: "list", data, first_id, last_id, has_more}` of the stored lists. */
function listOf(item: string): JsonSchema {
  return closed(["object", "data", "first_id", "last_id", "has_more"], {
    object: { const: "list" },
    data: { type: "array", items: schemaRef(item) },
    first_id: nullableString,
    last_id: nullableString,
    has_more: { type: "boolean" },
  });
}

const storedMessage = closed(["id", "role", "content", "content_parts", "name"], {
  id: { type: "string", description: "`<completion id>-<position>`." },
  role: { type: "string", enum: [...CHAT_ROLES] },
  content: { type: ["string", "null"], description: "The message's text parts joined by a line break." },
  content_parts: {
    type: "array",
    items: {
      oneOf: [
        closed(["type", "text"], { type: { const: "input_text" }, text: string }),
        closed(["type", "image_url"], { type: { const: "input_image" }, image_url: string }),
      ],
    },
  },
  name: nullableString,
  tool_calls: { type: "array", items: schemaRef("ChatCompletionMessageToolCall") },
  tool_call_id: string,
});

const model = closed(["id", "object", "created", "owned_by", "created_at", "model_name", "model_provider", "modelmux_model_id", "modelmux_kind"], {
  id: { type: "string", description: "The name a request uses: `provider/model`, an alias or a pool." },
  object: { const: "model" },
  created: unixSeconds,
  owned_by: { type: "string", description: "The provider; `modelmux` for a pool." },
  created_at: { type: "string", format: "date-time" },
  model_name: { type: "string", description: "The provider's own model id (an alias's model's); a pool's own name." },
  model_provider: { type: "string", description: "The provider (an alias's model's); `modelmux` for a pool." },
  modelmux_model_id: { type: "integer", minimum: 1, description: "The entry's 1-based position in the list, stable for a given config (the interface's `svc_model_id`)." },
  modelmux_kind: { type: "string", enum: ["model", "alias", "pool"], description: "A configured model, a plain alias of one, or a weighted pool." },
  modelmux_target: { type: "string", description: "An alias's model, as `provider/model`." },
  modelmux_members: {
    type: "array",
    description: "A pool's members that are served, in config order, with their weights.",
    items: closed(["model", "weight"], { model: string, weight: { type: "number", exclusiveMinimum: 0 } }),
  },
});

const imagesResponse = closed(["created", "data"], {
  created: unixSeconds,
  data: {
    type: "array",
    items: closed([], { b64_json: string, url: { type: "string", description: "On this router, `/files/images/…`, for 60 minutes; or the provider's." }, revised_prompt: string }),
  },
  background: string,
  output_format: string,
  quality: string,
  size: string,
  usage: {
    type: "object",
    description: "As the provider reported it.",
    properties: { input_tokens: count, output_tokens: count, total_tokens: count, input_tokens_details: { type: "object", properties: { image_tokens: count, text_tokens: count } } },
  },
});

const embeddingsResponse = closed(["object", "data", "model"], {
  object: { const: "list" },
  data: {
    type: "array",
    description: "One per input, in input order.",
    items: closed(["object", "index", "embedding"], {
      object: { const: "embedding" },
      index: count,
      embedding: {
        type: ["array", "string"],
        items: { type: "number" },
        description: "The vector's numbers; with `encoding_format: base64`, base64 of its little-endian float32 values.",
      },
    }),
  },
  model: { type: "string", description: "The model that answered, as its provider names it." },
  usage: {
    ...closed(["prompt_tokens", "total_tokens"], { prompt_tokens: count, total_tokens: count }),
    description: "Absent when the provider reported none: never made up.",
  },
});

// The Responses API is forwarded one-to-one (docs/interface.md, "Responses API"): its replies are
// the provider's, so only what every response carries is described.
const response: JsonSchema = {
  type: "object",
  description: "The provider's response object, relayed unchanged.",
  required: ["id", "object", "created_at", "model", "status"],
  properties: {
    id: string,
    object: { const: "response" },
    created_at: unixSeconds,
    model: string,
    status: { type: "string", description: "in_progress, completed, failed, cancelled, incomplete (and the provider's own, e.g. queued)." },
    output: { type: "array", items: freeForm },
    usage: { type: ["object", "null"] },
  },
};

const responseStreamEvent: JsonSchema = {
  type: "object",
  description:
    "The data of one event of a streamed response, relayed byte for byte. The router's own error event, for a stream that breaks off, is `{type: \"error\", code, message, param, error}`.",
  required: ["type"],
  properties: { type: string },
};

/** Every reply schema, by its name under `components.schemas`. */
export const REPLY_SCHEMAS: Readonly<Record<string, JsonSchema>> = {
  ErrorEnvelope: errorEnvelope,
  CompletionUsage: usage,
  ChatCompletionMessageToolCall: toolCall,
  ChatCompletion: closed(completionRequired, completionProperties, "A chat completion, normalised whatever the provider."),
  ChatCompletionChunk: chunk,
  ChatCompletionStreamEvent: {
    description:
      "The JSON of one `data:` event of a chat completion stream (`text/event-stream`): a chunk, or, when the stream fails after its first event, the error envelope as its last event. The stream ends with `data: [DONE]`, which is not JSON.",
    oneOf: [schemaRef("ChatCompletionChunk"), schemaRef("ErrorEnvelope")],
  },
  StoredChatCompletion: closed([...completionRequired, "metadata"], { ...completionProperties, metadata }, "A stored chat completion, with its metadata."),
  StoredChatCompletionList: listOf("StoredChatCompletion"),
  StoredChatCompletionDeleted: closed(["id", "object", "deleted"], { id: string, object: { const: "chat.completion.deleted" }, deleted: { const: true } }),
  StoredChatCompletionMessage: storedMessage,
  StoredChatCompletionMessageList: listOf("StoredChatCompletionMessage"),
  Model: model,
  ModelList: closed(["data", "first_id", "last_id", "has_more"], { data: { type: "array", items: schemaRef("Model") }, first_id: nullableString, last_id: nullableString, has_more: { type: "boolean" } }),
  ImagesResponse: imagesResponse,
  EmbeddingsResponse: embeddingsResponse,
  Response: response,
  ResponseStreamEvent: responseStreamEvent,
  ResponseForwarded: { type: "object", description: "The provider's reply, relayed unchanged (a deleted response, a list of input items)." },
  UsageRow: closed(
    ["requests", "errors", "input_tokens", "output_tokens", "cost_usd"],
    {
      date: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}$", description: "`interval=day`: the UTC day." },
      hour: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}$", description: "`interval=hour`: the UTC hour." },
      app: string,
      developer: string,
      provider: string,
      model: { type: "string", description: "The served `provider/model`." },
      requests: count,
      errors: { ...count, description: "Error replies (status 400 and above, 499 included) and streams that ended with their error event." },
      input_tokens: count,
      output_tokens: count,
      cost_usd: { type: "number", minimum: 0, description: "At the config's `pricing`; 0 for a model without a price." },
    },
    "The counts of one interval and one combination of the groups asked for.",
  ),
  UsageList: closed(["object", "start", "end", "interval", "group_by", "data"], {
    object: { const: "list" },
    start: { type: "string", format: "date" },
    end: { type: "string", format: "date" },
    interval: { type: "string", enum: ["day", "hour", "total"] },
    group_by: { type: "array", items: { type: "string", enum: ["app", "developer", "model", "provider"] } },
    data: { type: "array", items: schemaRef("UsageRow"), description: "Sorted by time, then by the groups in the order asked; an interval with no request has no row." },
  }),
  Health: closed(["status"], { status: { const: "ok" } }),
  Readiness: closed(["status", "checks"], {
    status: { const: "ready" },
    checks: {
      type: "object",
      additionalProperties: closed(["plugin", "status"], { plugin: string, status: { const: "ready" } }),
    },
  }),
  OpenApiDocument: {
    type: "object",
    description: "This document.",
    required: ["openapi", "info", "paths"],
    properties: { openapi: { const: "3.1.0" }, info: { type: "object" }, paths: { type: "object" } },
  },
  MetricsText: {
    type: "string",
    description: "The router's metrics in the Prometheus text exposition format 0.0.4: the `modelmux_*` series of the README's \"Metrics\".",
  },
};
