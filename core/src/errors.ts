/**
 * The one error module (docs/interface.md, "Errors"): every error reply of every endpoint is made
 * here, in the envelope `{"error": {"message", "type", "code", "param"}}`.
 */

export type ErrorType = "invalid_request_error" | "api_error" | "rate_limit_error" | "permission_error";

export interface ErrorEnvelope {
  error: { message: string; type: ErrorType; code: string | null; param: string | null };
}

export interface ModelmuxErrorInit {
  status: number;
  type: ErrorType;
  code: string | null;
  param?: string | null;
  /** Extra reply headers, e.g. `retry-after` or `allow`. */
  headers?: Record<string, string>;
  cause?: unknown;
  /** What the provider replied, when the error is its reply (`providerError`); never sent to the client. */
  upstream?: UpstreamFacts;
}

/**
 * What a provider's error reply said, kept beside the envelope for the router's choice of what to
 * try next (docs/interface.md, "Routing and resilience"): the envelope turns a 5xx into 502 and
 * keeps `retry-after` on a 429 only, this keeps the provider's own status and wait.
 */
export interface UpstreamFacts {
  /** The provider's HTTP status, or the one its stream error event stands for. */
  readonly status: number;
  /** Its `Retry-After` as sent: seconds or an HTTP date. */
  readonly retryAfter?: string;
  /** Its `retry-after-ms`, or the delay its body names, in milliseconds. */
  readonly retryAfterMs?: number;
}

/** An error with a known status and envelope. Anything else that is thrown is a bug: a 500. */
export class ModelmuxError extends Error {
  readonly status: number;
  readonly type: ErrorType;
  readonly code: string | null;
  readonly param: string | null;
  readonly headers: Record<string, string> | undefined;
  /** Set when the error is a provider's reply (`providerError`): its status and Retry-After. */
  readonly upstream: UpstreamFacts | undefined;

  constructor(message: string, init: ModelmuxErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = "ModelmuxError";
    this.status = init.status;
    this.type = init.type;
    this.code = init.code;
    this.param = init.param ?? null;
    this.headers = init.headers;
    this.upstream = init.upstream;
  }

  toEnvelope(): ErrorEnvelope {
    return { error: { message: this.message, type: this.type, code: this.code, param: this.param } };
  }
}

/** 400 `invalid_request_error`: a body that fails the schema, or a capability check. */
export function invalidRequest(message: string, opts: { code?: string; param?: string | null } = {}): ModelmuxError {
  return new ModelmuxError(message, { status: 400, type: "invalid_request_error", code: opts.code ?? "invalid_value", param: opts.param });
}

/** 401 for a missing, malformed or unknown credential. The message never echoes the key. */
export function invalidApiKey(message = "Invalid API key. Send 'Authorization: Bearer <key>' with a key configured in auth.api_keys."): ModelmuxError {
  // RFC 9110 asks a 401 to name the scheme it wants.
  return new ModelmuxError(message, { status: 401, type: "api_error", code: "invalid_api_key", headers: { "www-authenticate": 'Bearer realm="modelmux"' } });
}

/**
 * 403 for a valid credential on an admin endpoint that is not an admin key (docs/interface.md,
 * "Authentication"). Only an API key with `admin: true` is one: an identity-provider token never is.
 */
export function adminRequired(scheme: "api_key" | "jwt"): ModelmuxError {
  const message =
    scheme === "jwt"
      ? "This endpoint needs an admin key, and an identity-provider token is never one: send an API key that has admin: true on its auth.api_keys entry."
      : "This endpoint needs an admin key, and the API key sent is not one: make it an admin key with admin: true on its auth.api_keys entry, or send one that has it.";
  return new ModelmuxError(message, { status: 403, type: "permission_error", code: "admin_required" });
}

/**
 * 403 for a browser's preflight from a web origin `server.cors` does not list: without the allow
 * headers the browser refuses the request whatever the status; the message is for whoever looks.
 */
export function originNotAllowed(origin: string): ModelmuxError {
  return new ModelmuxError(`Origin '${origin}' may not call this router from a browser: add it to server.cors.origins in the router's config.`, {
    status: 403,
    type: "permission_error",
    code: "origin_not_allowed",
  });
}

/** 404 for a model name that is neither `provider/model` of a configured model nor an alias. */
export function modelNotFound(model: string): ModelmuxError {
  return new ModelmuxError(
    `The model '${model}' does not exist. Name a configured model as 'provider/model' or by an alias; GET /v1/models lists them.`,
    { status: 404, type: "invalid_request_error", code: "model_not_found", param: "model" },
  );
}

/**
 * 404 for a configured model whose provider is off because a variable of its `requires_env` was
 * not set when the router started: the message names the variables that turn it on.
 */
export function modelSwitchedOff(model: string, provider: string, variables: readonly string[]): ModelmuxError {
  const names = variables.length > 1 ? `${variables.slice(0, -1).join(", ")} and ${variables.at(-1)}` : (variables[0] ?? "");
  return new ModelmuxError(
    `The model '${model}' is off: its provider '${provider}' requires ${names}, not set when the router started. Set ${names} in the router's environment and restart it to use ${model}.`,
    { status: 404, type: "invalid_request_error", code: "model_not_found", param: "model" },
  );
}

/** 404 for an unknown route or an unknown stored object. */
export function notFound(message: string): ModelmuxError {
  return new ModelmuxError(message, { status: 404, type: "invalid_request_error", code: "not_found" });
}

export function methodNotAllowed(method: string, path: string, allowed: readonly string[]): ModelmuxError {
  return new ModelmuxError(`Method ${method} is not allowed on ${path}. Allowed: ${allowed.join(", ")}.`, {
    status: 405,
    type: "invalid_request_error",
    code: "method_not_allowed",
    headers: { allow: allowed.join(", ") },
  });
}

export function bodyTooLarge(limitBytes: number): ModelmuxError {
  return new ModelmuxError(`Request body is larger than the limit of ${limitBytes} bytes (server.body_limit).`, {
    status: 413,
    type: "invalid_request_error",
    code: "body_too_large",
    // The rest of the body is never buffered: the connection closes once the client has had the
    // time to read this reply (`router.handler` discards what it still sends, for a bounded while).
    headers: { connection: "close" },
  });
}

/** 408 for a client that did not send its request's headers and body within `server.request_timeout`. */
export function requestTimedOut(timeoutMs: number): ModelmuxError {
  return new ModelmuxError(
    `The request was not received within ${timeoutMs / 1000} s (server.request_timeout): send its headers and body without pausing, or raise server.request_timeout.`,
    { status: 408, type: "invalid_request_error", code: "request_timeout", headers: { connection: "close" } },
  );
}

/** 408 for a client that did not send a request's headers within `timeoutMs` (shorter than `server.request_timeout`). */
export function headersTimedOut(timeoutMs: number): ModelmuxError {
  return new ModelmuxError(
    `The request's headers were not received within ${timeoutMs / 1000} s: send them as soon as the connection is open, without pausing.`,
    { status: 408, type: "invalid_request_error", code: "request_timeout", headers: { connection: "close" } },
  );
}

/** 431 for request headers larger than node:http reads (`maxBytes`, all header lines together). */
export function headersTooLarge(maxBytes: number): ModelmuxError {
  return new ModelmuxError(`The request's headers are larger than the limit of ${maxBytes} bytes: send fewer or shorter headers.`, {
    status: 431,
    type: "invalid_request_error",
    code: "headers_too_large",
    headers: { connection: "close" },
  });
}

/** 413 for a chunked body whose chunk extensions (`;name=value` after a chunk's size) outgrow node:http's limit. */
export function chunkExtensionsTooLarge(maxBytes: number): ModelmuxError {
  return new ModelmuxError(`The request body's chunk extensions are larger than the limit of ${maxBytes} bytes: send the body without them.`, {
    status: 413,
    type: "invalid_request_error",
    code: "body_too_large",
    headers: { connection: "close" },
  });
}

/** 417 for an `Expect` header other than `100-continue`, the only expectation served. */
export function expectationFailed(): ModelmuxError {
  return new ModelmuxError("The request's Expect header cannot be met: only 'Expect: 100-continue' is supported; send the request without it.", {
    status: 417,
    type: "invalid_request_error",
    code: "expectation_failed",
    headers: { connection: "close" },
  });
}

export function unsupportedMediaType(contentType: string | null): ModelmuxError {
  return new ModelmuxError(
    `Content-Type must be application/json${contentType ? `, got '${contentType}'` : " and none was sent"}.`,
    { status: 415, type: "invalid_request_error", code: "unsupported_media_type" },
  );
}

export function rateLimited(message: string, retryAfterSeconds: number, headers: Record<string, string> = {}): ModelmuxError {
  return new ModelmuxError(message, {
    status: 429,
    type: "rate_limit_error",
    code: "rate_limit_exceeded",
    headers: { ...headers, "retry-after": String(Math.max(1, Math.ceil(retryAfterSeconds))) },
  });
}

/** 502: the provider failed, or sent something that cannot be read. */
export function upstreamError(message: string, cause?: unknown): ModelmuxError {
  return new ModelmuxError(message, { status: 502, type: "api_error", code: "upstream_error", cause });
}

/** 504: the provider exceeded its `timeout`. */
export function upstreamTimeout(provider: string, timeoutMs: number): ModelmuxError {
  return new ModelmuxError(`Provider '${provider}' did not answer within its timeout of ${timeoutMs / 1000}s.`, {
    status: 504,
    type: "api_error",
    code: "upstream_timeout",
  });
}

/** 504: the provider's reply went silent past `routing.timeouts.idle`. */
export function upstreamIdle(provider: string, idleMs: number): ModelmuxError {
  return new ModelmuxError(`Provider '${provider}' sent nothing for ${idleMs / 1000}s mid-reply (routing.timeouts.idle).`, {
    status: 504,
    type: "api_error",
    code: "upstream_timeout",
  });
}

/** 500 when `store: true` could not be honoured: the storage backend failed. Details go to the log. */
export function storageFailed(cause: unknown): ModelmuxError {
  return new ModelmuxError("The completion was generated but could not be stored (store: true); the storage backend failed. The request id finds the cause in the router's log.", {
    status: 500,
    type: "api_error",
    code: "storage_error",
    cause,
  });
}

/**
 * 500 when the storage backend failed, or did not answer within `storage.timeout`, on anything
 * but storing a completion: `what` says what could not be done ("list stored chat completions").
 * Details go to the log.
 */
export function storageUnavailable(what: string, cause: unknown): ModelmuxError {
  return new ModelmuxError(`Could not ${what}: the storage backend failed or did not answer in time. The request id finds the cause in the router's log.`, {
    status: 500,
    type: "api_error",
    code: "storage_error",
    cause,
  });
}

/**
 * 503 from `GET /readyz` (docs/interface.md, "Readiness"): `problems` name each plugin whose backend
 * does not answer, and why. Never cached: the next probe asks again.
 */
export function notReady(problems: readonly string[]): ModelmuxError {
  return new ModelmuxError(`Not ready: ${problems.join("; ")}.`, {
    status: 503,
    type: "api_error",
    code: "not_ready",
    headers: { "cache-control": "no-store" },
  });
}

/** 500 for a bug. The message says so; the cause is logged, never sent. */
export function internalError(cause?: unknown): ModelmuxError {
  return new ModelmuxError("Internal error in modelmux. This is a bug; the request id identifies it in the router's log.", {
    status: 500,
    type: "api_error",
    code: "internal_error",
    cause,
  });
}

export interface ProviderErrorInit {
  /** The provider's HTTP status. */
  status: number;
  /** The provider's own message, kept for the client. */
  message: string;
  code?: string | null;
  param?: string | null;
  /** The provider's `retry-after` (seconds, or an HTTP date), when it sent one. */
  retryAfter?: string | null;
  /** The provider's `retry-after-ms` (or a delay its body names), when it sent one: the router waits this exactly. */
  retryAfterMs?: number | null;
}

/**
 * Maps an error reply of a provider into the envelope (docs/interface.md, "Errors"): a 4xx keeps
 * its status and the provider's message; 429 becomes `rate_limit_error` / `rate_limit_exceeded`
 * with its `retry-after` (the provider's own code, e.g. `insufficient_quota`, is then only in the
 * message); any 5xx (Anthropic's 529 included) becomes 502 `upstream_error`. Provider plugins throw
 * what this returns.
 */
export function providerError(provider: string, init: ProviderErrorInit): ModelmuxError {
  const message = `${provider}: ${init.message}`;
  const upstream = upstreamFacts(init);
  if (init.status === 429) {
    const headers: Record<string, string> = {};
    if (init.retryAfter) headers["retry-after"] = init.retryAfter;
    // Every 429 reads the same to clients; the provider's own kind stays in the message.
    return new ModelmuxError(message, { status: 429, type: "rate_limit_error", code: "rate_limit_exceeded", param: init.param, headers, upstream });
  }
  if (init.status >= 400 && init.status < 500) {
    return new ModelmuxError(message, { status: init.status, type: "invalid_request_error", code: init.code ?? null, param: init.param, upstream });
  }
  return new ModelmuxError(`${message} (status ${init.status})`, { status: 502, type: "api_error", code: "upstream_error", upstream });
}

function upstreamFacts({ status, retryAfter, retryAfterMs }: ProviderErrorInit): UpstreamFacts {
  if (!retryAfter && (retryAfterMs === undefined || retryAfterMs === null)) return { status };
  const facts: { status: number; retryAfter?: string; retryAfterMs?: number } = { status };
  if (retryAfter) facts.retryAfter = retryAfter;
  if (retryAfterMs !== undefined && retryAfterMs !== null && Number.isFinite(retryAfterMs) && retryAfterMs >= 0) facts.retryAfterMs = retryAfterMs;
  return facts;
}

/** Turns anything thrown into a `ModelmuxError`; unknown errors become the 500 of a bug. */
export function toModelmuxError(error: unknown): ModelmuxError {
  if (error instanceof ModelmuxError) return error;
  return internalError(error);
}
