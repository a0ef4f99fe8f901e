/**
 * Anthropic error replies and stream `error` events -> the core's `ModelmuxError`
 * (docs/interface.md, "Errors"). The status mapping itself (4xx kept, 429 with retry-after, 5xx and
 * 529 -> 502) is the core's `providerError`, and the provider kit reads the body
 * `{type: "error", error: {type, message}}` and keeps credentials out of every message
 * (docs/plugins.md, "The provider kit"); this file says how Anthropic's errors read.
 */
import {
  errorMapper,
  parseErrorBody as readErrorBody,
  readErrorPayload,
  redactSecrets as redact,
  type ErrorMapper,
  type ModelmuxError,
  type UpstreamErrorInfo,
  type UpstreamErrorReply,
} from "@modelmux/core";

/**
 * The HTTP status Anthropic uses for each error type, for `error` events inside a 200 stream,
 * which carry the type but no status. Unknown types read as 500 (an upstream failure: 502).
 */
export const ERROR_TYPE_STATUS: Readonly<Record<string, number>> = Object.freeze({
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
});

/** What an error body says. `type` is Anthropic's error type (`overloaded_error`…), passed on as the code. */
export interface AnthropicErrorInfo {
  message: string;
  type: string | null;
}

/** Reads an error reply's body text, which may be JSON, HTML or nothing at all (the kit's reader). */
export function parseErrorBody(status: number, text: string): AnthropicErrorInfo {
  const { message, type } = readErrorBody(status, text);
  return { message, type };
}

/** Removes the configured key, anything shaped like a key (`sk-ant-…`) and any masked token from a message. */
export function redactSecrets(message: string, secret?: string): string {
  return redact(message, [secret]);
}

/** The router-wide code of a request longer than the model's context (README, "Routing and resilience"). */
const CONTEXT_LENGTH_EXCEEDED = "context_length_exceeded";

/**
 * How Anthropic words a 400 `invalid_request_error` for a request past the model's context: the
 * prompt alone (`prompt is too long: 210000 tokens > 200000 maximum`), or the prompt with
 * `max_tokens` (``input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, …``).
 */
const CONTEXT_LENGTH_MESSAGE = /prompt is too long|input length and `?max_tokens`? exceed context limit/i;

/**
 * Reads Anthropic's error body (the kit's reader); a request past the model's context gets the
 * code `context_length_exceeded`, as OpenAI's does, so routing sends it to the next target,
 * which may have a larger context, instead of returning it. The message stays Anthropic's.
 */
export function readAnthropicError(payload: unknown): UpstreamErrorInfo | undefined {
  const info = readErrorPayload(payload);
  if (info?.type !== "invalid_request_error" || !CONTEXT_LENGTH_MESSAGE.test(info.message)) return info;
  return { ...info, type: CONTEXT_LENGTH_EXCEEDED };
}

/** The error type's status, for an `error` event inside a 200 stream (500, a 502, for a type not known). */
const streamStatus = (info: UpstreamErrorInfo): number => (info.type === CONTEXT_LENGTH_EXCEEDED ? 400 : (info.type && ERROR_TYPE_STATUS[info.type]) || 500);

/**
 * The error mapping of a provider named `provider` whose credentials are `secrets`: Anthropic's
 * error type is the code (`context_length_exceeded` for a request past the model's context), and
 * an error event reads like the reply its type stands for.
 */
export const anthropicErrors = (provider: string, secrets: readonly (string | undefined)[]): ErrorMapper =>
  errorMapper({ provider, secrets, code: "type", streamStatus, read: readAnthropicError });

/**
 * Maps an upstream error reply (status >= 300) to the error thrown to the core.
 * @example
 * toProviderError("anthropic", { status: 529, text: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', headers: {} })
 * // 502 upstream_error "anthropic: Overloaded (status 529)"
 */
export function toProviderError(provider: string, reply: UpstreamErrorReply, secret?: string): ModelmuxError {
  return anthropicErrors(provider, [secret]).fromReply(reply);
}

/**
 * Maps a stream `error` event. Its error type gives the status Anthropic would have replied with
 * (`overloaded_error` -> 529 -> 502), so an error event before any content reads like the same
 * error as a reply; later, the core turns it into the stream's error event.
 */
export function toStreamError(provider: string, payload: unknown, secret?: string): ModelmuxError {
  return anthropicErrors(provider, [secret]).fromEvent(payload);
}
