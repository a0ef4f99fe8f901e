/**
 * The chaos upstream's Anthropic Messages wire format, typed against the official SDK
 * (`@anthropic-ai/sdk/resources/messages`): a `message` JSON reply; a stream of message_start,
 * content_block_start, ping, one content_block_delta per token, content_block_stop, message_delta
 * (stop_reason and usage) and message_stop; errors as `{ type: "error", error: { type, message } }`.
 * Like the real API it refuses a body without `max_tokens` and a final assistant message that ends
 * in whitespace.
 */
import type { Message, RawMessageStreamEvent, Usage } from "@anthropic-ai/sdk/resources/messages/messages";
import type { ErrorResponse, ErrorType } from "@anthropic-ai/sdk/resources/shared";
import type { ErrorReason } from "./chaos-behaviours.ts";
import type { Answer, ChaosWire, Frame } from "./chaos-wire.ts";

/** Anthropic's error types and messages, as its API words them. */
const ERRORS: Record<ErrorReason, { type: ErrorType; message: string }> = {
  rate_limit: {
    type: "rate_limit_error",
    message: "This request would exceed the rate limit for your organization (org-chaos) of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits.",
  },
  server_error: { type: "api_error", message: "Internal server error" },
  overloaded: { type: "overloaded_error", message: "Overloaded" },
  timeout: { type: "timeout_error", message: "Request timed out" },
  context_length_exceeded: { type: "invalid_request_error", message: "prompt is too long: 210000 tokens > 200000 maximum" },
  content_policy: { type: "invalid_request_error", message: "Output blocked by content filtering policy" },
  prefill: { type: "invalid_request_error", message: "This model does not support assistant message prefill. The conversation must end with a user message." },
  invalid_request: { type: "invalid_request_error", message: "max_tokens: Field required" },
  not_found: { type: "not_found_error", message: "Not found" },
};

function usageOf(answer: Answer, output: number): Usage {
  return {
    input_tokens: answer.promptTokens,
    output_tokens: output,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation: null,
    inference_geo: null,
    output_tokens_details: null,
    server_tool_use: null,
    service_tier: "standard",
    speed: null,
  };
}

function messageOf(answer: Answer): Message {
  return {
    id: answer.id,
    type: "message",
    role: "assistant",
    model: answer.model,
    content: [{ type: "text", text: answer.deltas.join(""), citations: null }],
    stop_reason: "end_turn",
    stop_sequence: null,
    stop_details: null,
    container: null,
    diagnostics: null,
    usage: usageOf(answer, answer.deltas.length),
  };
}

const event = (data: RawMessageStreamEvent | { type: "ping" }) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;

export const anthropicWire: ChaosWire = {
  format: "anthropic",
  id: (name, index) => `msg_${name}_${index}`,
  headers: (id) => ({ "request-id": `req_${id}` }),
  json: (answer) => JSON.stringify(messageOf(answer)),
  frames(answer) {
    const message = messageOf(answer);
    const frames: Frame[] = [
      { kind: "head", text: event({ type: "message_start", message: { ...message, content: [], stop_reason: null, usage: usageOf(answer, 1) } }) },
      { kind: "head", text: event({ type: "content_block_start", index: 0, content_block: { type: "text", text: "", citations: null } }) },
      { kind: "head", text: event({ type: "ping" }) },
    ];
    for (const text of answer.deltas) frames.push({ kind: "token", text: event({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }) });
    frames.push({ kind: "tail", text: event({ type: "content_block_stop", index: 0 }) });
    frames.push({
      kind: "tail",
      text: event({
        type: "message_delta",
        delta: { stop_reason: "end_turn", stop_sequence: null, container: null, stop_details: null },
        usage: { output_tokens: answer.deltas.length, input_tokens: null, cache_creation_input_tokens: null, cache_read_input_tokens: null, output_tokens_details: null, server_tool_use: null },
      }),
    });
    frames.push({ kind: "done", text: event({ type: "message_stop" }) });
    return frames;
  },
  malformedFrame: () => `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":\n\n`,
  errorEvent: (reason, message) => `event: error\ndata: ${anthropicWire.errorBody(0, reason, message)}\n\n`,
  errorBody(_status, reason, message) {
    const body: ErrorResponse = { type: "error", error: { type: ERRORS[reason].type, message: message ?? ERRORS[reason].message } as ErrorResponse["error"], request_id: "req_chaos" };
    return JSON.stringify(body);
  },
  messageOf: (reason) => ERRORS[reason].message,
  refusal(body, prefill) {
    if (typeof body?.max_tokens !== "number") return ERRORS.invalid_request.message;
    if (prefill !== undefined && /\s$/.test(prefill)) return "messages: final assistant content cannot end with trailing whitespace";
    return undefined;
  },
};
