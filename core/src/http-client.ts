/**
 * The core's HTTP client for upstream calls: `undici.request()` over one keep-alive Agent (a
 * connection pool per origin). On Node 20 this is far cheaper than the global fetch and its web
 * streams. Tests and embedders may hand plugins any object with the same `request` method.
 */
import { Agent, errors as undiciErrors } from "undici";
import type { Readable } from "node:stream";
import { ModelmuxError, upstreamError, upstreamTimeout } from "./errors.ts";

/** A reply body: a Node Readable with whole-body readers, like undici's. */
export type HttpBody = Readable & { text(): Promise<string>; json(): Promise<unknown> };

export interface HttpRequest {
  url: string;
  method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Aborts the call, e.g. when the client goes away. */
  signal?: AbortSignal;
  /** Time allowed for the reply headers, and for each gap between body chunks. */
  timeoutMs?: number;
  /** Names the provider in timeout and connection errors. */
  provider?: string;
}

export interface HttpResponse {
  status: number;
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
}

const noop = () => {};

const TIMEOUT_CODES = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "UND_ERR_CONNECT_TIMEOUT"]);

/** By code, not class: a plugin may bring its own copy of undici. */
function isTimeout(error: unknown): boolean {
  return TIMEOUT_CODES.has((error as { code?: string } | null)?.code ?? "");
}

const NETWORK_CODE = /^(UND_ERR_|E[A-Z]+$)/;

/**
 * The one classifier for failures of an upstream call, before or during its body (contract §7):
 * a timeout is 504, a network or protocol failure 502. An abort by our own client, an error that is
 * already ours, and anything else (a bug: 500) are returned unchanged. The core applies it to
 * whatever a provider throws, so a plugin need not; a plugin calls it only to classify a failure
 * before wrapping it in its own message (`throw toUpstreamError(error, ctx.name, call.timeoutMs)`).
 */
export function toUpstreamError(error: unknown, provider: string, timeoutMs: number): unknown {
  if (error instanceof ModelmuxError) return error;
  if (isTimeout(error)) return upstreamTimeout(provider, timeoutMs);
  if (error instanceof Error && error.name === "AbortError") return error;
  const code = (error as { code?: unknown } | null)?.code;
  if (error instanceof undiciErrors.UndiciError || (typeof code === "string" && NETWORK_CODE.test(code))) {
    return upstreamError(`Provider '${provider}' failed: the connection broke (${typeof code === "string" ? code : (error as Error).message}).`, error);
  }
  return error;
}

/**
 * Maps a failure while reading a 200 reply's body (JSON or stream): like `toUpstreamError`, and
 * whatever that leaves unclassified is the body breaking off (502), not a bug of ours. An error
 * that is already ours, or our own client's abort, is returned as is.
 */
export function toBodyReadError(error: unknown, provider: string, timeoutMs: number): unknown {
  if (error instanceof ModelmuxError) return error;
  const mapped = toUpstreamError(error, provider, timeoutMs);
  if (mapped !== error || (error instanceof Error && error.name === "AbortError")) return mapped;
  return upstreamError(`${provider}: the reply broke off (${error instanceof Error ? error.message : String(error)}).`, error);
}

/** How many distinct URLs `splitUrl` remembers; a provider calls a handful, ids aside. */
const URL_CACHE_SIZE = 256;

/**
 * `origin` and `path` of a URL, parsed once per distinct URL. `undici.request(url)` parses the URL
 * anew on every call (a WHATWG `new URL`) and copies its options; the agent's own `request` takes
 * the two parts directly, so the hot path skips both.
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

/** Creates the keep-alive client the core gives every plugin. */
export function createHttpClient(options: HttpClientOptions = {}): HttpClient {
  const agent = new Agent({
    keepAliveTimeout: options.keepAliveTimeout ?? 30_000,
    connections: options.connections ?? null,
    pipelining: 1,
  });
  const splitUrl = createUrlSplitter();
  return {
    async request(req) {
      const timeoutMs = req.timeoutMs ?? 600_000;
      try {
        const { origin, path } = splitUrl(req.url);
        const res = await agent.request({
          origin,
          path,
          method: req.method ?? (req.body === undefined ? "GET" : "POST"),
          headers: req.headers,
          body: req.body,
          signal: req.signal,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        });
        // A client that already left turns undici's abort into an 'error' on the body; without a
        // listener that would crash the process.
        res.body.on("error", noop);
        return { status: res.statusCode, headers: res.headers, body: res.body as unknown as HttpBody };
      } catch (error) {
        const provider = req.provider ?? new URL(req.url).host;
        const mapped = toUpstreamError(error, provider, timeoutMs);
        // Whatever undici.request throws is about reaching the upstream, never our bug.
        throw mapped === error && !(error instanceof Error && error.name === "AbortError")
          ? upstreamError(`Provider '${provider}' could not be reached (${(error as Error).message}).`, error)
          : mapped;
      }
    },
    close: () => agent.close(),
  };
}

/** Reads a header that undici may give as a string or an array. */
export function headerValue(headers: HttpResponse["headers"], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
