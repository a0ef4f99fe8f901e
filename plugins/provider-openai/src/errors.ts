/**
 * Upstream error replies -> the core's `ModelmuxError` (docs/interface.md, "Errors"). Pure
 * functions: the plugin reads the body and headers, these decide what the client sees. The status
 * mapping itself (4xx kept, 429 with retry-after, 5xx -> 502) is the core's `providerError`; this
 * file only reads OpenAI's error body, and the many shapes compatible servers use instead of it.
 */
import { headerValue, ModelmuxError, providerError, upstreamError, type HttpResponse, type UpstreamErrorReply } from "@modelmux/core";

/** What an error body says, whatever its shape. */
export interface UpstreamErrorInfo {
  message: string;
  code: string | null;
  param: string | null;
}

/** A proxy's HTML error page is not worth more than this in a client's error message. */
const MAX_TEXT_MESSAGE = 200;

function asString(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  return null;
}

/**
 * Reads an error object, tolerating the shapes seen in the wild: OpenAI's
 * `{"error": {"message", "type", "code", "param"}}`, `{"error": "text"}` (some proxies),
 * vLLM's `{"object": "error", "message": …}` and FastAPI's `{"detail": …}`.
 */
export function readErrorPayload(payload: unknown): UpstreamErrorInfo | undefined {
  if (typeof payload !== "object" || payload === null) return undefined;
  const body = payload as Record<string, unknown>;
  const inner = body.error;
  if (typeof inner === "string") return { message: inner, code: null, param: null };
  const source = typeof inner === "object" && inner !== null ? (inner as Record<string, unknown>) : body;
  const message = asString(source.message) ?? asString(body.detail);
  if (message === null) return undefined;
  // `type` is not a code (it names a class of error), so only `code` is passed on.
  return { message, code: asString(source.code), param: asString(source.param) };
}

/** Reads an error reply's body text, which may be JSON, HTML or nothing at all. */
export function parseErrorBody(status: number, text: string): UpstreamErrorInfo {
  try {
    const info = readErrorPayload(JSON.parse(text));
    if (info) return info;
  } catch {
    // Not JSON: fall through and use the text itself.
  }
  const flat = text.replace(/\s+/g, " ").trim();
  if (!flat) return { message: `HTTP ${status} with an empty body`, code: null, param: null };
  return { message: flat.length > MAX_TEXT_MESSAGE ? `${flat.slice(0, MAX_TEXT_MESSAGE)}…` : flat, code: null, param: null };
}

/**
 * Removes credentials from an upstream message. OpenAI echoes a masked key on 401
 * ("Incorrect API key provided: sk-proj-****abcd"); even masked, part of the key is in it, and
 * compatible servers may echo the whole header. The configured key, anything shaped like an
 * `sk-` key and any masked token are replaced.
 */
export function redactSecrets(message: string, secret?: string): string {
  let out = secret ? message.split(secret).join("[redacted]") : message;
  out = out.replace(/\bsk-[A-Za-z0-9_*-]{4,}/g, "[redacted]");
  return out.replace(/[A-Za-z0-9_-]*\*{3,}[A-Za-z0-9_-]*/g, "[redacted]");
}

/**
 * The `retry-after` to pass on, in seconds. OpenAI also sends `retry-after-ms`; a server that
 * sends only that still gets its wait passed on, rounded up to whole seconds.
 */
export function readRetryAfter(headers: HttpResponse["headers"]): string | null {
  const seconds = headerValue(headers, "retry-after");
  if (seconds) return seconds;
  const ms = Number(headerValue(headers, "retry-after-ms"));
  return Number.isFinite(ms) && ms > 0 ? String(Math.ceil(ms / 1000)) : null;
}

/**
 * Maps an upstream error reply (status >= 300) to the error thrown to the core.
 * @param provider the configured provider name, e.g. `groq`, which prefixes the message.
 * @param secret the configured API key, removed from the message.
 */
export function toProviderError(provider: string, reply: UpstreamErrorReply, secret?: string): ModelmuxError {
  const info = parseErrorBody(reply.status, reply.text);
  return providerError(provider, {
    status: reply.status,
    message: redactSecrets(info.message, secret),
    code: info.code,
    param: info.param,
    retryAfter: readRetryAfter(reply.headers),
  });
}

/**
 * Maps an error event inside a 200 stream. The reply status is already sent, so whatever the
 * upstream says, this is the upstream failing: 502 with its message kept.
 */
export function toStreamError(provider: string, payload: unknown, secret?: string): ModelmuxError {
  const info = readErrorPayload(payload);
  const message = info ? redactSecrets(info.message, secret) : "the stream carried an error without a message";
  return upstreamError(`${provider}: ${message}`);
}

