/**
 * The `ProviderCall` the core hands a provider: the bare model, the timeout, the request id, and
 * the call's abort notice: `signal` for the plugin, an `AbortSignal` made only when read, and the
 * same notice as the core's cheap hook (`CallAbort`) under `ABORT_HOOK`, which the core's own
 * `postUpstream`/`sendUpstream` hand to the HTTP client instead. The notice fires when the client
 * goes away, and when the core ends the call itself (`cancel`).
 *
 * The core's side of a call, which plugins do not see: `cancel`, and the whole-wait deadline of a
 * stream the core frames (README, "Errors"). Such a stream's first events may give nothing to send
 * (Anthropic's `ping`, Gemini's metadata-only events), so the deadline of each reply `sendUpstream`
 * gets for it lasts until the core has the first chunk to send (`streaming`), not until the
 * reader's first event: an upstream that pings and never answers is a 504 at the `timeout`.
 */
import { StreamedBody, type BodySource } from "./reply-body.ts";
import type { HttpBody } from "./client.ts";
import { CallAbort } from "./call-abort.ts";
import type { Exchange } from "../server/exchange.ts";
import type { ProviderCall } from "../plugin.ts";

/**
 * The key of the call's abort hook, which plugins do not see: `sendUpstream` listens to it so that
 * no `AbortController` is made per request (`call-abort.ts`). An own property, so a plugin's
 * copy of the call (`{ ...call, model }`) keeps it; a copy with its own `signal` is heard through
 * that signal instead (`send.ts`). A call object a plugin or a test makes has none.
 */
export const ABORT_HOOK: unique symbol = Symbol("modelmux.abortHook");

/**
 * The method by which `sendUpstream` hands the core's call each 200 reply it gets; a call object
 * a plugin or a test makes itself has none, and its replies' deadlines stay with their readers.
 */
export const TAKE_REPLY: unique symbol = Symbol("modelmux.takeReply");

/** A call that takes the replies `sendUpstream` gets for it. */
export interface ReplyTaker {
  [TAKE_REPLY](body: HttpBody): void;
}

/** The replies' whole-wait deadlines end as their readers say (`HttpBody.markStreaming`). */
const BY_READERS = 0;
/** The core holds them until its first chunk (`holdDeadlines`). */
const HELD = 1;
/** The first chunk is here: held deadlines are over, later replies' are their readers' again. */
const OVER = 2;

/** A provider call as the core holds it: what the plugin gets, and the core's controls of it. */
export class CoreCall implements ProviderCall, ReplyTaker {
  readonly [ABORT_HOOK]: CallAbort;
  readonly requestId: string;
  /** `routing.timeouts.idle` of the call's target: the longest silence between reply chunks (`send.ts`); 0 is none. */
  idleTimeoutMs = 0;
  /** `routing.timeouts.connect` of the call's target: the longest a new connection may take; 0 is undici's default. */
  connectTimeoutMs = 0;
  /** The request continues its final assistant message (`ProviderCall.continuation`). */
  continuation = false;
  /** A successful reply's head came (`sendUpstream`): a failure from now on is a reply that broke off, not a refused connection. */
  replied = false;
  private deadlines = BY_READERS;
  /** The requests whose deadline is held: usually one. */
  private held: BodySource | BodySource[] | undefined;

  constructor(
    x: Exchange,
    readonly model: string,
    readonly timeoutMs: number,
  ) {
    this[ABORT_HOOK] = new CallAbort(x.abort);
    this.requestId = x.requestId;
  }

  /** Made on first read, and aborted with the hook (`CallAbort.signal`). */
  get signal(): AbortSignal {
    return this[ABORT_HOOK].signal;
  }

  /**
   * The core stopped reading the provider's reply before its end (a stream whose answer is whole,
   * and whose upstream holds its connection open): the upstream requests made with this call's
   * hook or signal are cancelled. The client is not gone: the request's own hook does not fire.
   */
  cancel(): void {
    this[ABORT_HOOK].end();
  }

  /** The core frames this call's stream: it ends its replies' whole-wait deadlines itself (`streaming`). */
  holdDeadlines(): void {
    if (this.deadlines === BY_READERS) this.deadlines = HELD;
  }

  /** The core has the stream's first chunk to send: the held deadlines are over. */
  streaming(): void {
    if (this.deadlines !== HELD) return;
    this.deadlines = OVER;
    const held = this.held;
    this.held = undefined;
    if (Array.isArray(held)) for (const request of held) request.releaseDeadline();
    else held?.releaseDeadline();
  }

  [TAKE_REPLY](body: HttpBody): void {
    this.replied = true;
    // A body of another client (a test's, an embedder's) keeps its own ways.
    if (this.deadlines !== HELD || !(body instanceof StreamedBody)) return;
    const request = body.source;
    request.holdDeadline();
    const held = this.held;
    if (held === undefined) this.held = request;
    else if (Array.isArray(held)) held.push(request);
    else this.held = [held, request];
  }
}

/** The call of request `x` to a provider for `model` (empty for a forwarded call that names no model). */
export function providerCall(x: Exchange, model: string, timeoutMs: number): CoreCall {
  return new CoreCall(x, model, timeoutMs);
}
