/**
 * The chaos upstream's OpenAI Chat Completions wire format, typed against the official SDK
 * (`openai/resources/chat/completions`): a `chat.completion` JSON reply; a stream of
 * `chat.completion.chunk` events (the role first, one chunk per token, the finish reason, the
 * usage chunk when `stream_options.include_usage` is set, `usage: null` on the others) ending in
 * `data: [DONE]`; errors as `{ error: { message, type, param, code } }`.
 */
import type { ChatCompletion, ChatCompletionChunk } from "openai/resources/chat/completions";
import type { CompletionUsage } from "openai/resources/completions";
import type { ErrorObject } from "openai/resources/shared";
import type { ErrorReason } from "./chaos-behaviours.ts";
import type { Answer, ChaosWire, Frame } from "./chaos-wire.ts";

/** OpenAI's error objects, as its API words them. */
const ERRORS: Record<ErrorReason, Omit<ErrorObject, "message"> & { message: string }> = {
  rate_limit: {
    message: "Rate limit reached for gpt-4o in organization org-chaos on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.",
    type: "requests",
    param: null,
    code: "rate_limit_exceeded",
  },
  server_error: { message: "The server had an error while processing your request. Sorry about that!", type: "server_error", param: null, code: null },
  overloaded: { message: "The engine is currently overloaded, please try again later.", type: "server_error", param: null, code: null },
  timeout: { message: "Request timed out.", type: "server_error", param: null, code: null },
  context_length_exceeded: {
    message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130044 tokens. Please reduce the length of the messages.",
    type: "invalid_request_error",
    param: "messages",
    code: "context_length_exceeded",
  },
  content_policy: {
    message: "Your request was rejected as a result of our safety system. Your prompt may contain text that is not allowed by our safety system.",
    type: "invalid_request_error",
    param: null,
    code: "content_policy_violation",
  },
  prefill: {
    message: "This model does not support assistant message prefill. The conversation must end with a user message.",
    type: "invalid_request_error",
    param: "messages",
    code: null,
  },
  invalid_request: { message: "We could not parse the JSON body of your request.", type: "invalid_request_error", param: null, code: null },
  not_found: { message: "Invalid URL", type: "invalid_request_error", param: null, code: null },
};

function usageOf(answer: Answer): CompletionUsage {
  const completion = answer.deltas.length;
  return { prompt_tokens: answer.promptTokens, completion_tokens: completion, total_tokens: answer.promptTokens + completion };
}

const common = (answer: Answer) => ({ id: answer.id, created: Math.floor(Date.now() / 1000), model: answer.model, system_fingerprint: "fp_chaos" });

const event = (data: ChatCompletionChunk) => `data: ${JSON.stringify(data)}\n\n`;

export const openaiWire: ChaosWire = {
  format: "openai",
  id: (name, index) => `chatcmpl-${name}-${index}`,
  headers: (id) => ({ "x-request-id": `req_${id}` }),
  json(answer) {
    const completion: ChatCompletion = {
      ...common(answer),
      object: "chat.completion",
      choices: [{ index: 0, message: { role: "assistant", content: answer.deltas.join(""), refusal: null, annotations: [] }, logprobs: null, finish_reason: "stop" }],
      usage: usageOf(answer),
    };
    return JSON.stringify(completion);
  },
  frames(answer) {
    const chunk = (choices: ChatCompletionChunk["choices"], usage: CompletionUsage | null = null): ChatCompletionChunk => ({
      ...common(answer),
      object: "chat.completion.chunk",
      choices,
      ...(answer.includeUsage ? { usage } : {}),
    });
    const delta = (d: ChatCompletionChunk.Choice.Delta, finish: ChatCompletionChunk.Choice["finish_reason"] = null) => chunk([{ index: 0, delta: d, logprobs: null, finish_reason: finish }]);
    const frames: Frame[] = [{ kind: "head", text: event(delta({ role: "assistant", content: "", refusal: null })) }];
    for (const piece of answer.deltas) frames.push({ kind: "token", text: event(delta({ content: piece })) });
    frames.push({ kind: "tail", text: event(delta({}, "stop")) });
    if (answer.includeUsage) frames.push({ kind: "tail", text: event(chunk([], usageOf(answer))) });
    frames.push({ kind: "done", text: "data: [DONE]\n\n" });
    return frames;
  },
  malformedFrame: (answer) => `data: {"id":"${answer.id}","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":\n\n`,
  errorEvent: (reason, message) => `data: ${openaiWire.errorBody(0, reason, message)}\n\n`,
  errorBody: (_status, reason, message) => JSON.stringify({ error: { ...ERRORS[reason], ...(message === undefined ? {} : { message }) } }),
  messageOf: (reason) => ERRORS[reason].message,
  // A final assistant message is not refused: OpenAI reads it as context.
  refusal: (body) => (Array.isArray(body?.messages) ? undefined : ERRORS.invalid_request.message),
};
