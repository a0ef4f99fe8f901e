/**
 * What an endpoint sees of one request, whichever way it came into the h3 app: `NodeExchange`
 * (`node-exchange.ts`, straight on `IncomingMessage`/`ServerResponse`, for `router.handler`) or
 * `WebExchange` (`web-exchange.ts`, the event's web `Request`, for `router.fetch` and a mounted
 * app). One endpoint serves both, and no endpoint touches a runtime object. The middleware
 * (`middleware/`) fill in what they own: the request id, the principal, the body limit, the rate
 * limits, and the listeners told when the reply has ended.
 */
import type { ModelmuxError } from "../errors.ts";
import type { Principal } from "./auth/authenticate.ts";
import type { RateLimits } from "../rate-limit/acquire.ts";
import type { AttemptRecord } from "../routing/types.ts";
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

  /**
   * Set by the `requestId` middleware (the client's when short and plain, else a new one) and
   * echoed as `x-request-id`; `""` when no middleware set one (then no header is sent).
   */
  requestId: string;
  /** What the request's body may weigh, in bytes (`bodyLimit` middleware); a 413 past it. */
  bodyLimit: number;
  /** The bytes of the JSON body `readJsonBody` read: a budget's estimate of the prompt (README, "Budgets"). */
  bodyBytes?: number;
  /** The limiter and limits that apply (`rateLimit` middleware); none without it. */
  rateLimits: RateLimits | undefined;
  /** Adds a listener told once the reply has ended (written, or abandoned): the access log's hook. */
  onEnd(listener: EndListener): void;
  /** Adds a listener told once an SSE reply's head has gone to the client, its frames to follow: the open-streams gauge's hook. */
  onStreamStart(listener: StreamListener): void;
  /** Marks the reply an SSE stream whose head is written and tells the `onStreamStart` listeners, once; the reply writers call it. */
  startStream(): void;
  /** An SSE reply's head has been written (`startStream`): the reply is a stream until `end`. */
  readonly streaming: boolean;
  /** Tells the `onEnd` listeners, once; the reply writers call it. `closed` says why the router cut the reply short. */
  end(status: number, closed?: string): void;
  /** `performance.now()` when the request arrived, for the access log. */
  readonly startedAt: number;
  /**
   * The path of the route the request is on, as registered (`/v1/chat/completions/:id`), for the
   * metrics: set by `route-handlers.ts` when the route matches (and by the `metrics` middleware from
   * h3's match, for a request a middleware refuses first); undefined on no route.
   */
  route?: string;
  /** Who is calling; set by authentication on `/v1/` paths. */
  principal?: Principal;
  /** The `provider/model` the request was routed to, for the access log. */
  model?: string;
  /** The reply's token usage once known, for the access log. */
  usage?: Usage;
  /** The upstream attempts of a routed request, for the access log (`routing/attempts.ts`). */
  attempts?: readonly AttemptRecord[];
  /** `x-modelmux-attempts` of a routed request that failed: its error reply carries it. */
  routingHeaders?: Readonly<Record<string, string>>;
  /** The `x-ratelimit-*` headers of an admitted request; its error reply carries them too. */
  rateLimitHeaders?: Readonly<Record<string, string>>;
  /** Headers every reply to the request carries, whatever it is (the `cors` middleware's). */
  replyHeaders?: Readonly<Record<string, string>>;
  /** The model as the client named it (a model, an alias, a pool), for the access log. */
  requestedModel?: string;
  /** The client asked for a stream. */
  stream?: boolean;
  /** What the client was told went wrong: an error reply's error, or the error event that ended its stream. */
  failure?: ModelmuxError;
  /** `performance.now()` when the reply's head went to the client: its time to first byte. */
  repliedAt?: number;
  /** The request's cost in USD once worked out (`operations/request-cost.ts`); null: no price or no usage. */
  cost?: number | null;
}

/** Told the reply's status once it has ended; `closed` when the router closed it early (`write_timeout`). */
export type EndListener = (x: Exchange, status: number, closed: string | undefined) => void;

/** Told when an SSE reply's head has gone to the client (`onStreamStart`). */
export type StreamListener = (x: Exchange) => void;

/** The body limit when no `bodyLimit` middleware sets one: `server.body_limit`'s default. */
export const DEFAULT_BODY_LIMIT = 10 * 1024 * 1024;

/** The parameters of a route without any (shared, frozen). */
export const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});

/**
 * A listener that throws (an embedder's, say) must not keep the others from hearing, nor fail the
 * reply writer that ended the exchange: its error becomes a process warning.
 */
function listenerFailed(error: unknown): void {
  process.emitWarning(error instanceof Error ? error : new Error(String(error)), { code: "MODELMUX_LISTENER" });
}

/** The state both exchanges keep the same way. */
export abstract class BaseExchange implements Exchange {
  params: Readonly<Record<string, string>> = NO_PARAMS;
  principal?: Principal;
  model?: string;
  usage?: Usage;
  attempts?: readonly AttemptRecord[];
  routingHeaders?: Readonly<Record<string, string>>;
  rateLimitHeaders?: Readonly<Record<string, string>>;
  replyHeaders?: Readonly<Record<string, string>>;
  requestedModel?: string;
  stream?: boolean;
  failure?: ModelmuxError;
  repliedAt?: number;
  cost?: number | null;
  route?: string;
  streaming = false;
  requestId = "";
  bodyLimit = DEFAULT_BODY_LIMIT;
  bodyBytes?: number;
  rateLimits: RateLimits | undefined = undefined;
  readonly abort = new RequestAbort();
  private parsedQuery: URLSearchParams | undefined;
  /** Usually one listener (the access log): kept as is, an array only for more. */
  private endListeners: EndListener | EndListener[] | undefined;
  private ended = false;
  /** Kept like `endListeners`: usually the metrics' one. */
  private streamListeners: StreamListener | StreamListener[] | undefined;

  constructor(
    readonly method: string,
    readonly path: string,
    readonly search: string,
    readonly startedAt: number,
  ) {}

  onEnd(listener: EndListener): void {
    const current = this.endListeners;
    this.endListeners = current === undefined ? listener : Array.isArray(current) ? [...current, listener] : [current, listener];
  }

  onStreamStart(listener: StreamListener): void {
    const current = this.streamListeners;
    this.streamListeners = current === undefined ? listener : Array.isArray(current) ? [...current, listener] : [current, listener];
  }

  startStream(): void {
    if (this.streaming) return;
    this.streaming = true;
    const listeners = this.streamListeners;
    if (listeners === undefined) return;
    for (const listener of Array.isArray(listeners) ? listeners : [listeners]) {
      try {
        listener(this);
      } catch (error) {
        listenerFailed(error);
      }
    }
  }

  end(status: number, closed?: string): void {
    if (this.ended) return;
    this.ended = true;
    const listeners = this.endListeners;
    if (listeners === undefined) return;
    if (!Array.isArray(listeners)) {
      try {
        listeners(this, status, closed);
      } catch (error) {
        listenerFailed(error);
      }
      return;
    }
    for (const listener of listeners) {
      try {
        listener(this, status, closed);
      } catch (error) {
        listenerFailed(error);
      }
    }
  }

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

