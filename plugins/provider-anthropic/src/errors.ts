/**
 * Anthropic error replies and stream `error` events -> the core's `ModelmuxError`
 * (docs/interface.md, "Errors"). The status mapping itself (4xx kept, 429 with retry-after, 5xx and
 * 529 -> 502) is the core's `providerError`; this file reads Anthropic's error body
 * `{type: "error", error: {type, message}}` and keeps credentials out of every message.
 */
import { headerValue, ModelmuxError, providerError, upstreamError, type UpstreamErrorReply } from "@modelmux/core";

/** What an error body says. `type` is Anthropic's error type (`overloaded_error`…), passed on as the code. */
export interface AnthropicErrorInfo {
  message: string;
  type: string | null;
}

/** A proxy's HTML error page is not worth more than this in a client's error message. */
const MAX_TEXT_MESSAGE = 200;

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

/**
 * Reads an error payload: Anthropic's `{type: "error", error: {type, message}}`, or the looser
 * `{error: "text"}` / `{message}` a proxy in front of it may send.
 */
export function readErrorPayload(payload: unknown): AnthropicErrorInfo | undefined {
  if (typeof payload !== "object" || payload === null) return undefined;
  const body = payload as Record<string, unknown>;
  if (typeof body.error === "string") return { message: body.error, type: null };
  const inner = typeof body.error === "object" && body.error !== null ? (body.error as Record<string, unknown>) : body;
  if (typeof inner.message !== "string") return undefined;
  return { message: inner.message, type: typeof inner.type === "string" && inner.type !== "error" ? inner.type : null };
}

/** Reads an error reply's body text, which may be JSON, HTML or nothing at all. */
export function parseErrorBody(status: number, text: string): AnthropicErrorInfo {
  try {
    const info = readErrorPayload(JSON.parse(text));
    if (info) return info;
  } catch {
    // Not JSON: fall through and use the text itself.
  }
  const flat = text.replace(/\s+/g, " ").trim();
  if (!flat) return { message: `HTTP ${status} with an empty body`, type: null };
  return { message: flat.length > MAX_TEXT_MESSAGE ? `${flat.slice(0, MAX_TEXT_MESSAGE)}…` : flat, type: null };
}

/**
 * Removes credentials from an upstream message: the configured key, anything shaped like an
 * Anthropic key (`sk-ant-…`) and any masked token (`sk-ant-***abcd`).
 */
export function redactSecrets(message: string, secret?: string): string {
  let out = secret ? message.split(secret).join("[redacted]") : message;
  out = out.replace(/\bsk-ant-[A-Za-z0-9_*-]*/g, "[redacted]");
  return out.replace(/[A-Za-z0-9_-]*\*{3,}[A-Za-z0-9_-]*/g, "[redacted]");
}

/**
 * Maps an upstream error reply (status >= 300) to the error thrown to the core.
 * @param provider the configured provider name, which prefixes the message.
 * @param secret the configured API key, removed from the message.
 * @example
 * toProviderError("anthropic", { status: 529, text: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', headers: {} })
 * // 502 upstream_error "anthropic: Overloaded (status 529)"
 */
export function toProviderError(provider: string, reply: UpstreamErrorReply, secret?: string): ModelmuxError {
  const info = parseErrorBody(reply.status, reply.text);
  return providerError(provider, {
    status: reply.status,
    message: redactSecrets(info.message, secret),
    code: info.type,
    retryAfter: headerValue(reply.headers, "retry-after") ?? null,
  });
}

/**
 * Maps a stream `error` event. Its error type gives the status Anthropic would have replied with
 * (`overloaded_error` -> 529 -> 502), so an error event before any content reads like the same
 * error as a reply; later, the core turns it into the stream's error event.
 */
export function toStreamError(provider: string, payload: unknown, secret?: string): ModelmuxError {
  const info = readErrorPayload(payload);
  if (!info) return upstreamError(`${provider}: the stream carried an error without a message`);
  const status = (info.type && ERROR_TYPE_STATUS[info.type]) || 500;
  return providerError(provider, { status, message: redactSecrets(info.message, secret), code: info.type });
}

