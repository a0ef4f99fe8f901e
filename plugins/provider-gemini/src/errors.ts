/**
 * Google error replies -> the core's `ModelmuxError` (docs/interface.md, "Errors"). Pure functions:
 * the plugin reads the body and headers, these decide what the client sees. The status mapping
 * itself (4xx kept, 429 with retry-after, 5xx -> 502) is the core's `providerError`; this file
 * reads Google's `{"error": {"code", "message", "status", "details"}}` body and keeps the API key
 * out of it.
 */
import { headerValue, ModelmuxError, providerError, upstreamError, type HttpResponse, type UpstreamErrorReply } from "@modelmux/core";

/** What an error body says. */
export interface GoogleErrorInfo {
  message: string;
  /** Google's canonical status name, e.g. `INVALID_ARGUMENT`, `RESOURCE_EXHAUSTED`. */
  status: string | null;
  /** The HTTP code the body names, for errors inside a 200 stream. */
  code: number | null;
  /** A `google.rpc.RetryInfo` detail's delay, e.g. `"30s"`. */
  retryDelay: string | null;
}

/** A proxy's HTML error page is not worth more than this in a client's error message. */
const MAX_TEXT_MESSAGE = 200;

const RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo";

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Reads Google's error object. Also takes the array form `[{"error": …}]` that
 * `streamGenerateContent` without `alt=sse` uses, and `{"error": "text"}` from proxies.
 */
export function readGoogleError(payload: unknown): GoogleErrorInfo | undefined {
  const body = Array.isArray(payload) ? payload[0] : payload;
  if (!isObject(body)) return undefined;
  const inner = body.error;
  if (typeof inner === "string") return { message: inner, status: null, code: null, retryDelay: null };
  if (!isObject(inner) || typeof inner.message !== "string") return undefined;
  const retry = Array.isArray(inner.details) ? inner.details.find((d) => isObject(d) && d["@type"] === RETRY_INFO) : undefined;
  return {
    message: inner.message,
    status: typeof inner.status === "string" ? inner.status : null,
    code: typeof inner.code === "number" ? inner.code : null,
    retryDelay: isObject(retry) && typeof retry.retryDelay === "string" ? retry.retryDelay : null,
  };
}

/** Reads an error reply's body text, which may be Google's JSON, HTML or nothing at all. */
export function parseErrorBody(status: number, text: string): GoogleErrorInfo {
  try {
    const info = readGoogleError(JSON.parse(text));
    if (info) return info;
  } catch {
    // Not JSON: fall through and use the text itself.
  }
  const flat = text.replace(/\s+/g, " ").trim();
  const message = !flat ? `HTTP ${status} with an empty body` : flat.length > MAX_TEXT_MESSAGE ? `${flat.slice(0, MAX_TEXT_MESSAGE)}…` : flat;
  return { message, status: null, code: null, retryDelay: null };
}

/**
 * Removes credentials from an upstream message: the configured key, anything shaped like a
 * Google API key (`AIza…`), and `key=` query parameters (Google echoes request URLs in some errors).
 */
export function redactSecrets(message: string, secret?: string): string {
  let out = secret ? message.split(secret).join("[redacted]") : message;
  out = out.replace(/AIza[0-9A-Za-z_-]{8,}/g, "[redacted]");
  return out.replace(/([?&]key=)[^&\s"']+/g, "$1[redacted]");
}

/**
 * A protobuf Duration (`"30s"`, `"1.5s"`, `"0.2s"`) as whole seconds for `retry-after`, rounded
 * up; null when it is not one.
 */
export function retryDelaySeconds(delay: string): string | null {
  const match = /^(\d+(?:\.\d+)?)s$/.exec(delay.trim());
  if (!match) return null;
  return String(Math.max(1, Math.ceil(Number(match[1]))));
}

/** The `retry-after` to pass on: the header when Google sent one, else the RetryInfo detail. */
export function readRetryAfter(headers: HttpResponse["headers"], info: GoogleErrorInfo): string | null {
  return headerValue(headers, "retry-after") || (info.retryDelay ? retryDelaySeconds(info.retryDelay) : null);
}

/**
 * Maps an upstream error reply (status >= 300) to the error thrown to the core. The envelope's
 * code is Google's status name (`INVALID_ARGUMENT`, `PERMISSION_DENIED`…); on 429 the core makes
 * it the router-wide `rate_limit_exceeded` (docs/interface.md, "Errors").
 * @param provider the configured provider name, which prefixes the message.
 * @param secret the configured API key, removed from the message.
 */
export function toProviderError(provider: string, reply: UpstreamErrorReply, secret?: string): ModelmuxError {
  const info = parseErrorBody(reply.status, reply.text);
  return providerError(provider, {
    status: reply.status,
    message: redactSecrets(info.message, secret),
    code: info.status,
    retryAfter: readRetryAfter(reply.headers, info),
  });
}

/**
 * Maps an error object inside a 200 stream. Before the first chunk it becomes the client's error
 * reply, so it is mapped by the status it names like any error reply (a 429 stays a 429);
 * without one it is the upstream failing: 502.
 */
export function toStreamError(provider: string, payload: unknown, secret?: string): ModelmuxError {
  const info = readGoogleError(payload);
  if (!info) return upstreamError(`${provider}: the stream carried an error without a message`);
  const message = redactSecrets(info.message, secret);
  if (info.code === null || info.code < 400) return upstreamError(`${provider}: ${message}`);
  return providerError(provider, {
    status: info.code,
    message,
    code: info.status,
    retryAfter: info.retryDelay ? retryDelaySeconds(info.retryDelay) : null,
  });
}

