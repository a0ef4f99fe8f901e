/**
 * What an endpoint sees of one request, whichever server runs the router. The Node adapter
 * (`node-handler.ts`, straight on `IncomingMessage`/`ServerResponse`) and the fetch adapter
 * (`fetch-handler.ts`, web `Request`/`Response`) each implement it, so one endpoint serves both and
 * no endpoint touches a runtime object.
 */
import { randomUUID } from "node:crypto";
import type { Principal } from "./auth/authenticate.ts";
import type { Usage } from "../types/chat.ts";
import type { AbortHook } from "../upstream/call-abort.ts";
import { RequestAbort } from "./request-abort.ts";

export interface Exchange {
  readonly method: string;
  /** The path without the query, as sent (still percent-encoded): `/v1/chat/completions`. */
  readonly path: string;
  /** The query string with its `?`, or `""`. */
  readonly search: string;
  /** The query, parsed on first use. */
  readonly query: URLSearchParams;
  /**
   * `scheme://host[:port]` as this connection addressed the router, computed on first use: on
   * node:http the Host header when it is a plain host[:port] (`isValidHost`), else the connection's
   * local address; on fetch the request URL's origin. URLs in replies use `publicOrigin(x, policy)`,
   * which adds `server.public_url` and the forwarded headers of trusted proxies.
   */
  readonly origin: string;
  /** The address of the connection's peer (node:http); undefined on fetch, which has none. */
  readonly peerAddress: string | undefined;
  /** The route's parameters (`:id`), percent-decoded. */
  params: Readonly<Record<string, string>>;
  /** A request header by its lower-case name. */
  header(name: string): string | undefined;
  /** The raw body; a body past `limit` bytes is a 413 (read no further). */
  readBody(limit: number): Promise<Buffer>;
  /** Aborts when the client goes away before its reply is complete. */
  readonly abort: AbortHook;
  /** The same as an `AbortSignal`, made on first use (an AbortController per request costs). */
  readonly signal: AbortSignal;

  /** Given by the client (when short and plain) or made here; echoed as `x-request-id`. */
  readonly requestId: string;
  /** `performance.now()` when the request arrived, for the access log. */
  readonly startedAt: number;
  /** Who is calling; set by authentication on `/v1/` paths. */
  principal?: Principal;
  /** The `provider/model` the request was routed to, for the access log. */
  model?: string;
  /** The reply's token usage once known, for the access log. */
  usage?: Usage;
  /** The `x-ratelimit-*` headers of an admitted request; its error reply carries them too. */
  rateLimitHeaders?: Readonly<Record<string, string>>;
}

/** A client's own request id is kept when it is short and plain, so it cannot forge log lines. */
const CLIENT_REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The request id of a request: the client's `x-request-id` when plain, else a new UUID. */
export function requestIdFor(given: string | undefined): string {
  return given !== undefined && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
}

/** The parameters of a route without any (shared, frozen). */
export const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});

/** The state every adapter's exchange keeps the same way. */
export abstract class BaseExchange implements Exchange {
  params: Readonly<Record<string, string>> = NO_PARAMS;
  principal?: Principal;
  model?: string;
  usage?: Usage;
  rateLimitHeaders?: Readonly<Record<string, string>>;
  readonly abort = new RequestAbort();
  private parsedQuery: URLSearchParams | undefined;

  constructor(
    readonly method: string,
    readonly path: string,
    readonly search: string,
    readonly requestId: string,
    readonly startedAt: number,
  ) {}

  abstract readonly origin: string;
  abstract readonly peerAddress: string | undefined;
  abstract header(name: string): string | undefined;
  abstract readBody(limit: number): Promise<Buffer>;

  get query(): URLSearchParams {
    return (this.parsedQuery ??= new URLSearchParams(this.search));
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }
}

