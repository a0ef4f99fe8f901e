/**
 * The core's HTTP client for upstream calls, on undici's dispatcher API over keep-alive Agents (a
 * connection pool per origin; one Agent per connect timeout in use, usually one): one small handler object per request (`undici-handler.ts`) and a
 * light body (`reply-body.ts`) instead of `undici.request()`'s promise layers and Readable body. On
 * Node 20 this is far cheaper than the global fetch and its web streams, and cheaper than
 * `undici.request()`. Tests and embedders may hand plugins any object with the same `request` method.
 */
import { Agent, UndiciError } from "./undici-parts.ts";
import { ModelmuxError, upstreamError, upstreamIdle, upstreamTimeout } from "../errors.ts";
import { MAX_TIMER_MS } from "../config/units.ts";
import { abortReasonOf, DEADLINE_CODE, DispatchedRequest } from "./undici-handler.ts";
import type { AbortHook } from "./call-abort.ts";
import { DEFAULT_UPSTREAM_BODY_LIMIT, UPSTREAM_BODY_TOO_LARGE, type UpstreamBodyTooLarge } from "./body-limit.ts";

export { bufferLimitOf, DEFAULT_UPSTREAM_BODY_LIMIT, UpstreamBodyTooLarge } from "./body-limit.ts";
export type { AbortHook, AbortListener } from "./call-abort.ts";

export interface HttpRequest {
  url: string;
  method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Aborts the call, e.g. when the client goes away; the error is the signal's reason. */
  signal?: AbortSignal;
  /**
   * The core's cheaper form of `signal` (either or both may be given): what its upstream helpers
   * (`postUpstream`, `sendUpstream`) pass for the core's own provider calls, whose abort notice a
   * plugin sees only as `call.signal`. An abort through it fails the call, or its body, with an
   * error named `AbortError`, as an aborted signal does.
   */
  abort?: AbortHook;
  /**
   * The call's timeout: from sending the request until its reply is complete, or, for a stream,
   * until its reader has the first event (`HttpBody.markStreaming`; for a reader that parses the
   * body its own way, the first chunk: `HttpBody.keepDeadline`), or until the core has the first
   * chunk to send of a stream it frames (`provider-call.ts`); from then on, the longest gap between
   * body chunks. 0 is no limit. Default 10 minutes.
   */
  timeoutMs?: number;
  /**
   * A stream's longest silence (`routing.timeouts.idle`), when shorter than `timeoutMs`: the wait
   * for the reply's head and each gap between its body chunks; past it the request fails as timed
   * out. 0 or unset: `timeoutMs` bounds them.
   */
  idleTimeoutMs?: number;
  /** The longest a new connection may take (`routing.timeouts.connect`); 0 or unset: undici's 10 s. */
  connectTimeoutMs?: number;
  /** Names the provider in timeout and connection errors. */
  provider?: string;
}

/**
 * A reply body, as `HttpClient.request` gives it. A Node `Readable` with `text()` and `json()`
 * added (what `replyBody()` and test fakes return) satisfies it too.
 * @example
 * for await (const chunk of res.body) process(chunk); // or: const data = await res.body.json();
 */
export interface HttpBody extends AsyncIterable<Buffer> {
  /** The whole body (or what is left of it), decoded as UTF-8. */
  text(): Promise<string>;
  /** The whole body parsed as JSON. */
  json(): Promise<unknown>;
  /**
   * The whole body (or what is left of it) as bytes, with the same limit and timeout as `text()`.
   * Absent on bodies made in process: read those by iteration.
   */
  bytes?(): Promise<Buffer>;
  /** Stops reading; aborts the upstream request if its reply is not complete yet. */
  destroy(error?: Error): void;
  /** True once the body is released: destroyed, failed, or read to its end. */
  readonly destroyed: boolean;
  /**
   * The most a reader may hold of this body at once, in bytes: its whole `text()`, one SSE event
   * (`server.upstream_body_limit`). Unset on a body that is not an upstream's: then
   * `DEFAULT_UPSTREAM_BODY_LIMIT` (`bufferLimitOf`).
   */
  readonly bufferLimit?: number;
  /**
   * Says this reader ends the call's whole-wait timeout itself: with `markStreaming` once it has a
   * stream's first event, or never (a whole reply read by iteration). Call it before the first
   * read. Without it, the first chunk read by iteration ends that bound, so a plugin that parses a
   * stream its own way (NDJSON, its own SSE parser) is never cut at `timeout` mid-stream; the
   * core's readers (`readSseEvents`, the relays) call it, so that a stream that sends only
   * comments, or drips its first event, still gets its 504. Absent on bodies made in process.
   */
  keepDeadline?(): void;
  /**
   * Says the reply is a stream under way: its first event has been read. Until then (for a reader
   * that called `keepDeadline`, and for `text()`/`bytes()`) the call's timeout bounds the whole
   * wait, headers and body; from then on it bounds each gap between chunks only. Ignored for a
   * reply `sendUpstream` got for a stream the core frames: the core ends that bound at the first
   * chunk it sends (`provider-call.ts`). Absent on bodies made in process.
   */
  markStreaming?(): void;
}

export interface HttpResponse {
  status: number;
  /** Lower-case names; a repeated header is an array. */
  headers: Record<string, string | string[] | undefined>;
  body: HttpBody;
}

export interface HttpClient {
  request(request: HttpRequest): Promise<HttpResponse>;
  close(): Promise<void>;
}

export interface HttpClientOptions {
  /** Keep idle upstream sockets this long (ms). */
  keepAliveTimeout?: number;
  /** Upper bound of sockets per origin. */
  connections?: number;
  /**
   * The most read of one reply before its reader stops and the request is cancelled, in bytes: a
   * whole `text()`/`json()`, one SSE event (`server.upstream_body_limit`). Default 64 MiB.
   */
  bufferLimit?: number;
}

/** The timeout of a request that names none: 10 minutes. */
const DEFAULT_TIMEOUT_MS = 600_000;

const TIMEOUT_CODES = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "UND_ERR_CONNECT_TIMEOUT", DEADLINE_CODE]);

/** By code, not class: a plugin may bring its own copy of undici. */
function isTimeout(error: unknown): boolean {
  return TIMEOUT_CODES.has((error as { code?: string } | null)?.code ?? "");
}

const NETWORK_CODE = /^(UND_ERR_|E[A-Z]+$)/;

/** The caller's own abort (a signal's or an `AbortHook`'s), which no mapping touches. */
const isAbort = (error: unknown): boolean => error instanceof Error && error.name === "AbortError";

/**
 * The one classifier for failures of an upstream call, before or during its body (docs/interface.md, "Errors"):
 * a timeout is 504, a network or protocol failure 502, a reply or event over
 * `server.upstream_body_limit` 502 naming the limit. An abort by our own client, an error that is
 * already ours, and anything else (a bug: 500) are returned unchanged. The core applies it to
 * whatever a provider throws, so a plugin need not; a plugin calls it only to classify a failure
 * before wrapping it in its own message (`throw toUpstreamError(error, ctx.name, call.timeoutMs)`).
 */
export function toUpstreamError(error: unknown, provider: string, timeoutMs: number): unknown {
  if (error instanceof ModelmuxError) return error;
  if (isTimeout(error)) {
    const idle = (error as { idleTimeoutMs?: number }).idleTimeoutMs;
    return connectionFailure(idle ? upstreamIdle(provider, idle) : upstreamTimeout(provider, timeoutMs));
  }
  if (isAbort(error)) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if (code === UPSTREAM_BODY_TOO_LARGE) return tooLargeError(error as UpstreamBodyTooLarge, provider);
  if (error instanceof UndiciError || (typeof code === "string" && NETWORK_CODE.test(code))) {
    return connectionFailure(upstreamError(`Provider '${provider}' failed: the connection broke (${typeof code === "string" ? code : (error as Error).message}).`, error));
  }
  return error;
}

/** The errors made of a connection or body that broke off or stalled (`isConnectionFailure`). */
const connectionFailures = new WeakSet<ModelmuxError>();

function connectionFailure(error: ModelmuxError): ModelmuxError {
  connectionFailures.add(error);
  return error;
}

/**
 * True for an error that `toUpstreamError` or `toBodyReadError` made of a connection or reply body
 * that broke off or stalled: not one the upstream reported, nor an event past the size limit. Once
 * every choice of a chat stream has its finish reason, the core ends the stream normally on such a
 * failure, as the answer is whole (README "Errors").
 */
export function isConnectionFailure(error: unknown): boolean {
  return error instanceof ModelmuxError && connectionFailures.has(error);
}

/** 502 for a reply or an event past the limit: what was refused, and the key that allows more. */
function tooLargeError({ limit, part }: UpstreamBodyTooLarge, provider: string): ModelmuxError {
  const what = part === "event" ? "a stream event" : "a reply";
  return upstreamError(
    `Provider '${provider}' sent ${what} larger than the limit of ${limit} bytes (server.upstream_body_limit); the rest was not read. Raise server.upstream_body_limit if its replies are this large.`,
  );
}

/**
 * Maps a failure while reading a 200 reply's body (JSON or stream): like `toUpstreamError`, and
 * whatever that leaves unclassified is the body breaking off (502), not a bug of ours. An error
 * that is already ours, or our own client's abort, is returned as is.
 */
export function toBodyReadError(error: unknown, provider: string, timeoutMs: number): unknown {
  if (error instanceof ModelmuxError) return error;
  const mapped = toUpstreamError(error, provider, timeoutMs);
  if (mapped !== error || isAbort(error)) return mapped;
  const broken = connectionFailure(upstreamError(`${provider}: the reply broke off (${error instanceof Error ? error.message : String(error)}).`, error));
  bodyFailures.add(broken);
  return broken;
}

/** The connection failures that came after the reply began (`toBodyReadError`'s own). */
const bodyFailures = new WeakSet<ModelmuxError>();

/**
 * True for a failure `toBodyReadError` made of a reply body that broke off after the reply began:
 * the router does not retry those on the same target (docs/interface.md, "Routing and resilience").
 */
export function isBrokenReply(error: unknown): boolean {
  return error instanceof ModelmuxError && bodyFailures.has(error);
}

/** How many distinct URLs `splitUrl` remembers; a provider calls a handful, ids aside. */
const URL_CACHE_SIZE = 256;

/**
 * `origin` and `path` of a URL, parsed once per distinct URL. `undici.request(url)` parses the URL
 * anew on every call (a WHATWG `new URL`) and copies its options; the agent's `dispatch` takes the
 * two parts directly, so the hot path skips both.
 */
function createUrlSplitter() {
  const cache = new Map<string, { origin: string; path: string }>();
  return function splitUrl(url: string): { origin: string; path: string } {
    let parts = cache.get(url);
    if (parts === undefined) {
      const parsed = new URL(url);
      parts = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
      if (cache.size >= URL_CACHE_SIZE) cache.clear();
      cache.set(url, parts);
    }
    return parts;
  };
}

/** The host of a URL, for naming the upstream in an error; the URL itself when it does not parse. */
function hostOf(url: string): string {
  return URL.canParse(url) ? new URL(url).host : url;
}

/**
 * What a request rejects with when it fails before its reply's headers: `toUpstreamError`'s mapping,
 * and anything that leaves unclassified is about reaching the upstream (502), never our bug. The
 * caller's own abort is passed on as it is.
 */
function toRequestFailure(error: unknown, request: HttpRequest, timeoutMs: number): unknown {
  const provider = request.provider ?? hostOf(request.url);
  const mapped = toUpstreamError(error, provider, timeoutMs);
  return mapped === error && !isAbort(error)
    ? upstreamError(`Provider '${provider}' could not be reached (${error instanceof Error ? error.message : String(error)}).`, error)
    : mapped;
}

/**
 * Creates the keep-alive client the core gives every plugin.
 * @example
 * const http = createHttpClient();
 * const res = await http.request({ url: "http://127.0.0.1:8000/v1/models", timeoutMs: 5_000, provider: "local" });
 * const models = await res.body.json();
 */
export function createHttpClient(options: HttpClientOptions = {}): HttpClient {
  const makeAgent = (connectTimeoutMs?: number) =>
    new Agent({
      keepAliveTimeout: options.keepAliveTimeout ?? 30_000,
      connections: options.connections ?? null,
      pipelining: 1,
      ...(connectTimeoutMs && { connect: { timeout: connectTimeoutMs } }),
    });
  const agent = makeAgent();
  // One pool per connect timeout in use (undici sets it per agent): usually one, the routing default.
  const agents = new Map<number, InstanceType<typeof Agent>>();
  const agentFor = (connectTimeoutMs: number | undefined): InstanceType<typeof Agent> => {
    if (!connectTimeoutMs) return agent;
    let found = agents.get(connectTimeoutMs);
    if (found === undefined) agents.set(connectTimeoutMs, (found = makeAgent(connectTimeoutMs)));
    return found;
  };
  const splitUrl = createUrlSplitter();
  const bufferLimit = options.bufferLimit ?? DEFAULT_UPSTREAM_BODY_LIMIT;
  return {
    request(req) {
      const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      if (req.abort?.aborted || req.signal?.aborted) return Promise.reject(toRequestFailure(abortReasonOf(req), req, timeoutMs));
      let url: { origin: string; path: string };
      try {
        url = splitUrl(req.url);
      } catch (error) {
        return Promise.reject(toRequestFailure(error, req, timeoutMs));
      }
      const handler = new DispatchedRequest(req, timeoutMs, bufferLimit, toRequestFailure);
      // 0 turns undici's timers off too; past what a timer holds, they would fire at once. One
      // value for both: undici makes a new timer each time the two differ (twice a request).
      const partTimeout = req.idleTimeoutMs ? Math.min(req.idleTimeoutMs, timeoutMs || MAX_TIMER_MS, MAX_TIMER_MS) : Math.min(timeoutMs, MAX_TIMER_MS);
      // Never throws: undici reports every failure, even of the options, to `handler.onError`.
      agentFor(req.connectTimeoutMs).dispatch(
        {
          origin: url.origin,
          path: url.path,
          method: req.method ?? (req.body === undefined ? "GET" : "POST"),
          headers: req.headers,
          body: req.body,
          // The handler's deadline bounds the whole wait; these bound each part of it, as before.
          headersTimeout: partTimeout,
          bodyTimeout: partTimeout,
        },
        handler,
      );
      return handler.response;
    },
    close: () => Promise.all([agent.close(), ...[...agents.values()].map((a) => a.close())]).then(() => undefined),
  };
}

/** Reads a header that may be given as a string or, when repeated, an array (its first value). */
export function headerValue(headers: HttpResponse["headers"], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
