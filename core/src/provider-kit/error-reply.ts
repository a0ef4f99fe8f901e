/**
 * Upstream error replies and stream error events -> the core's errors (docs/plugins.md, "The
 * provider kit"; the statuses: docs/interface.md, "Errors"). One reader takes the shapes providers
 * and the servers copying them send: OpenAI's `{"error": {message, type, code, param}}`,
 * Anthropic's `{"type": "error", "error": {type, message}}`, Google's `{"error": {code, message,
 * status, details}}` (also in an array), `{"error": "text"}` from proxies, vLLM's
 * `{"object": "error", message}`, FastAPI's `{"detail"}`, and a body that is not JSON at all. The
 * status mapping is `providerError`'s; every message has its credentials removed first.
 */
import { providerError, upstreamError, type ModelmuxError } from "../errors.ts";
import { headerValue, type HttpResponse } from "../upstream/client.ts";
import type { UpstreamErrorReply } from "../upstream/send.ts";
import { redactSecrets } from "./redact.ts";

/** What an error body says, whatever its shape; a field its shape lacks is null. */
export interface UpstreamErrorInfo {
  message: string;
  /** OpenAI's `code` (as text; Google's number too). */
  code: string | null;
  /** Anthropic's (and OpenAI's) error `type`, e.g. `overloaded_error`. */
  type: string | null;
  /** Google's canonical status name, e.g. `RESOURCE_EXHAUSTED`. */
  status: string | null;
  /** The HTTP status the body names (Google's numeric `code`), for errors inside a 200 stream. */
  httpStatus: number | null;
  param: string | null;
  /** A `google.rpc.RetryInfo` detail's delay, e.g. `"30s"`. */
  retryDelay: string | null;
}

/** A proxy's HTML error page is not worth more than this in a client's error message. */
const MAX_TEXT_MESSAGE = 200;
const RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo";

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const asString = (value: unknown): string | null => (typeof value === "string" ? value : typeof value === "number" ? String(value) : null);
const onlyMessage = (message: string): UpstreamErrorInfo => ({ message, code: null, type: null, status: null, httpStatus: null, param: null, retryDelay: null });

/** Reads a parsed error payload of any of the shapes above; undefined when it carries no message. */
export function readErrorPayload(payload: unknown): UpstreamErrorInfo | undefined {
  const body = Array.isArray(payload) ? (payload[0] as unknown) : payload;
  if (!isObject(body)) return undefined;
  if (typeof body.error === "string") return onlyMessage(body.error);
  const source = isObject(body.error) ? body.error : body;
  const message = asString(source.message) ?? asString(body.detail);
  if (message === null) return undefined;
  const retry = Array.isArray(source.details) ? (source.details as unknown[]).find((d) => isObject(d) && d["@type"] === RETRY_INFO) : undefined;
  return {
    message,
    code: asString(source.code),
    type: typeof source.type === "string" && source.type !== "error" ? source.type : null,
    status: typeof source.status === "string" ? source.status : null,
    httpStatus: typeof source.code === "number" ? source.code : null,
    param: asString(source.param),
    retryDelay: isObject(retry) && typeof retry.retryDelay === "string" ? retry.retryDelay : null,
  };
}

/**
 * Reads an error reply's body text, which may be JSON, HTML or nothing at all: a body `read` does
 * not understand gives a short, flattened excerpt of itself, an empty one names the status.
 */
export function parseErrorBody(status: number, text: string, read: (payload: unknown) => UpstreamErrorInfo | undefined = readErrorPayload): UpstreamErrorInfo {
  try {
    const info = read(JSON.parse(text));
    if (info) return info;
  } catch {
    // Not JSON: fall through and use the text itself.
  }
  const flat = text.replace(/\s+/g, " ").trim();
  if (!flat) return onlyMessage(`HTTP ${status} with an empty body`);
  return onlyMessage(flat.length > MAX_TEXT_MESSAGE ? `${flat.slice(0, MAX_TEXT_MESSAGE)}…` : flat);
}

/** A protobuf Duration (`"30s"`, `"1.5s"`) as whole seconds for `retry-after`, rounded up; null when it is not one. */
export function retryDelaySeconds(delay: string): string | null {
  const match = /^(\d+(?:\.\d+)?)s$/.exec(delay.trim());
  return match ? String(Math.max(1, Math.ceil(Number(match[1])))) : null;
}

/**
 * The `retry-after` to pass on, in seconds: the header; else OpenAI's `retry-after-ms`, rounded
 * up; else the RetryInfo delay of Google's body.
 */
export function readRetryAfter(headers: HttpResponse["headers"], info?: Pick<UpstreamErrorInfo, "retryDelay">): string | null {
  const seconds = headerValue(headers, "retry-after");
  if (seconds) return seconds;
  const ms = Number(headerValue(headers, "retry-after-ms"));
  if (Number.isFinite(ms) && ms > 0) return String(Math.ceil(ms / 1000));
  return info?.retryDelay ? retryDelaySeconds(info.retryDelay) : null;
}

/** A protobuf Duration (`"30s"`, `"1.5s"`) in milliseconds; null when it is not one. */
function durationMs(delay: string): number | null {
  const match = /^(\d+(?:\.\d+)?)s$/.exec(delay.trim());
  return match ? Math.ceil(Number(match[1]) * 1000) : null;
}

/**
 * The exact wait a provider asked for, in milliseconds, for the router's retries: OpenAI's
 * `retry-after-ms`, else the RetryInfo delay of Google's body; null when neither was sent (a
 * plain `retry-after` then says it, `readRetryAfter`).
 */
export function readRetryAfterMs(headers: HttpResponse["headers"], info?: Pick<UpstreamErrorInfo, "retryDelay">): number | null {
  const header = headerValue(headers, "retry-after-ms")?.trim();
  const ms = header ? Number(header) : Number.NaN;
  if (Number.isFinite(ms) && ms >= 0) return ms;
  return info?.retryDelay ? durationMs(info.retryDelay) : null;
}

/** How a provider's errors read. */
export interface ErrorMapperOptions {
  /** The configured provider name (`ctx.name`), which prefixes every message. */
  provider: string;
  /** Removed from every message: the key, credential headers (`upstreamHeaders(...).secrets`). */
  secrets?: readonly (string | undefined)[];
  /** The field that is the envelope's `code`: OpenAI's `code` (the default), Anthropic's `type`, Google's `status`. */
  code?: "code" | "type" | "status";
  /**
   * The status an error event inside a 200 stream stands for (Anthropic's by its type, Google's
   * named in the body); null or none: the upstream failing, a 502.
   */
  streamStatus?(info: UpstreamErrorInfo): number | null;
  /** Reads a provider's own error payload instead of the shapes above (`{"problem": …}`). */
  read?(payload: unknown): UpstreamErrorInfo | undefined;
}

/** A provider's error mapping, made once at setup. */
export interface ErrorMapper {
  /** An error reply (status >= 300): `postUpstream`'s `toError`. */
  fromReply(reply: UpstreamErrorReply): ModelmuxError;
  /** An error event inside a 200 stream, already parsed. */
  fromEvent(payload: unknown): ModelmuxError;
  /** Any upstream text without the provider's credentials. */
  redact(text: string): string;
}

/**
 * Makes a provider's error mapping.
 * @example
 * const errors = errorMapper({ provider: ctx.name, secrets: headers.secrets, code: "type" });
 * postUpstream(ctx, call, { url, headers: headers.json, body, toError: errors.fromReply });
 */
export function errorMapper({ provider, secrets = [], code = "code", streamStatus, read = readErrorPayload }: ErrorMapperOptions): ErrorMapper {
  const redact = (text: string): string => redactSecrets(text, secrets);
  return {
    redact,
    fromReply(reply) {
      const info = parseErrorBody(reply.status, reply.text, read);
      return providerError(provider, {
        status: reply.status,
        message: redact(info.message),
        code: info[code],
        param: info.param,
        retryAfter: readRetryAfter(reply.headers, info),
        retryAfterMs: readRetryAfterMs(reply.headers, info),
      });
    },
    fromEvent(payload) {
      const info = read(payload);
      if (!info) return upstreamError(`${provider}: the stream carried an error without a message`);
      const message = redact(info.message);
      const status = streamStatus?.(info) ?? null;
      if (status === null || status < 400) return upstreamError(`${provider}: ${message}`);
      const retryAfter = info.retryDelay ? retryDelaySeconds(info.retryDelay) : null;
      return providerError(provider, { status, message, code: info[code], retryAfter, retryAfterMs: info.retryDelay ? durationMs(info.retryDelay) : null });
    },
  };
}
