/**
 * Google error replies -> the core's `ModelmuxError` (docs/interface.md, "Errors"). Pure functions:
 * the plugin reads the body and headers, these decide what the client sees. The status mapping
 * itself (4xx kept, 429 with retry-after, 5xx -> 502) is the core's `providerError`; the provider
 * kit reads Google's `{"error": {"code", "message", "status", "details"}}` body and keeps the API
 * key out of it (docs/plugins.md, "The provider kit"); this file says how Google's errors read.
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

export { retryDelaySeconds } from "@modelmux/core";

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

const toGoogle = ({ message, status, httpStatus, retryDelay }: UpstreamErrorInfo): GoogleErrorInfo => ({ message, status, code: httpStatus, retryDelay });

/**
 * Reads Google's error object (the kit's reader, which also takes the array form `[{"error": …}]`
 * of `streamGenerateContent` without `alt=sse`, and `{"error": "text"}` from proxies); a payload
 * without an `error` is not one.
 */
export function readGoogleError(payload: unknown): GoogleErrorInfo | undefined {
  const body = (Array.isArray(payload) ? payload[0] : payload) as { error?: unknown } | null | undefined;
  const info = typeof body === "object" && body?.error !== undefined ? readErrorPayload(payload) : undefined;
  return info && toGoogle(info);
}

/** Reads an error reply's body text, which may be Google's JSON, HTML or nothing at all. */
export function parseErrorBody(status: number, text: string): GoogleErrorInfo {
  return toGoogle(readErrorBody(status, text));
}

/**
 * Removes credentials from an upstream message: the configured key, anything shaped like a
 * Google API key (`AIza…`), and `key=` query parameters (Google echoes request URLs in some errors).
 */
export function redactSecrets(message: string, secret?: string): string {
  return redact(message, [secret]);
}

/**
 * How Google words an `INVALID_ARGUMENT` for a request past the model's context: the Gemini API's
 * `The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).`, and
 * Vertex AI's `Unable to submit request because the input token count is 131335 but model only
 * supports up to 131072. …`.
 */
const CONTEXT_LENGTH_MESSAGE = /input token count \(\d+\) exceeds the maximum number of tokens allowed|input token count is \d+ but model only supports up to/i;

/**
 * Reads Google's error body (the kit's reader); a request past the model's context gets the
 * router-wide code `context_length_exceeded` instead of `INVALID_ARGUMENT`, so routing sends it to
 * the next target, which may have a larger context (README, "Routing and resilience"). The
 * message stays Google's.
 */
export function readGeminiError(payload: unknown): UpstreamErrorInfo | undefined {
  const info = readErrorPayload(payload);
  if (info?.status !== "INVALID_ARGUMENT" || !CONTEXT_LENGTH_MESSAGE.test(info.message)) return info;
  return { ...info, status: "context_length_exceeded" };
}

/**
 * The error mapping of a provider named `provider` whose credentials are `secrets`. The envelope's
 * code is Google's status name (`INVALID_ARGUMENT`…), `context_length_exceeded` for a request past
 * the model's context; on 429 the core makes it the router-wide `rate_limit_exceeded`
 * (docs/interface.md, "Errors"). An error inside a 200 stream is mapped by the status it names
 * like any error reply (a 429 stays a 429); without one it is a 502.
 */
export const geminiErrors = (provider: string, secrets: readonly (string | undefined)[]): ErrorMapper =>
  errorMapper({ provider, secrets, code: "status", streamStatus: (info) => info.httpStatus, read: readGeminiError });

/** Maps an upstream error reply (status >= 300) to the error thrown to the core. */
export function toProviderError(provider: string, reply: UpstreamErrorReply, secret?: string): ModelmuxError {
  return geminiErrors(provider, [secret]).fromReply(reply);
}

/** Maps an error object inside a 200 stream. */
export function toStreamError(provider: string, payload: unknown, secret?: string): ModelmuxError {
  return geminiErrors(provider, [secret]).fromEvent(payload);
}
