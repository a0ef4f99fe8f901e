/**
 * One upstream request on undici's dispatcher API: the handler undici calls back (its legacy
 * `onConnect`/`onHeaders`/`onData`/`onComplete`/`onError` methods, which undici 7 calls without a
 * wrapper), and the reply it resolves with. One object per request does everything a request needs
 * — settle the caller's promise, feed the body, listen for the caller's abort, keep the call's
 * deadline — so the hot path makes no closure, no Readable and no promise per layer.
 *
 * The deadline (README, "Errors": a provider's `timeout`): one timer per request, from its
 * dispatch until the reply is complete or, for a stream, until its reader has the first event
 * (`HttpBody.markStreaming`), or the first chunk for a reader that parses the body its own way
 * (`HttpBody.keepDeadline`).
 * The core may hold the deadline past both (`holdDeadline`) and end it itself: a framed stream's
 * first event may give nothing to send (a ping), so its bound lasts until the core's first chunk.
 * undici's own timers bound each wait on its own (the headers; each gap between body chunks),
 * which an upstream that drips a byte at a time never trips; the deadline bounds the whole wait.
 * When it passes, the request is cancelled, which closes its connection. A timeout of 0 is no
 * limit: no deadline, and undici's timers are off too.
 */
import type { Dispatcher } from "undici";
import { MAX_TIMER_MS } from "../config/units.ts";
import { abortError, StreamedBody, type BodySource } from "./reply-body.ts";
import type { AbortListener, HttpBody, HttpRequest, HttpResponse } from "./client.ts";
import { promiseOn, type Settlers } from "../utils/promise-on.ts";

/** Turns a failure before the reply's headers into what the caller's promise rejects with. */
export type RequestFailureMapper = (error: unknown, request: HttpRequest, timeoutMs: number) => unknown;

/** The code of the error a request fails with when its deadline passes; `toUpstreamError` makes it a 504. */
export const DEADLINE_CODE = "MODELMUX_UPSTREAM_DEADLINE";

function passDeadline(request: DispatchedRequest): void {
  request.expire();
}

/** Why the caller went away: its signal's reason, as undici's own `request` reports it, or an `AbortError`. */
export function abortReasonOf(request: HttpRequest): unknown {
  const signal = request.signal;
  return signal?.aborted ? (signal.reason ?? abortError()) : abortError();
}

/**
 * A reply: status and body at once, the headers parsed from undici's raw buffers on first access
 * (a provider reads them only for an error reply or a content type).
 */
class DispatchedReply implements HttpResponse {
  private parsed: HttpResponse["headers"] | undefined;

  constructor(
    readonly status: number,
    private readonly raw: ReadonlyArray<Buffer | string>,
    readonly body: HttpBody,
  ) {}

  get headers(): HttpResponse["headers"] {
    return (this.parsed ??= parseRawHeaders(this.raw));
  }
}

/** undici's raw `[name, value, …]` pairs as an object: lower-case names, a repeated name as an array. */
export function parseRawHeaders(raw: ReadonlyArray<Buffer | string>): Record<string, string | string[]> {
  // No prototype: a header named `__proto__` is just a header.
  const headers = Object.create(null) as Record<string, string | string[]>;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toString("latin1").toLowerCase();
    const value = raw[i + 1]!.toString("latin1");
    const seen = headers[name];
    if (seen === undefined) headers[name] = value;
    else if (typeof seen === "string") headers[name] = [seen, value];
    else seen.push(value);
  }
  return headers;
}

/**
 * The handler of one request. `response` settles at the reply's headers (or the failure before
 * them); the body is then fed by `onData`/`onComplete`/`onError`. The caller's abort (an `AbortHook`
 * or an `AbortSignal`) is listened to from `onConnect` until the reply completes or fails.
 */
export class DispatchedRequest implements Dispatcher.DispatchHandler, AbortListener, BodySource, Settlers<HttpResponse> {
  readonly response: Promise<HttpResponse>;
  resolve: ((reply: HttpResponse) => void) | undefined;
  reject: ((error: unknown) => void) | undefined;
  /** undici's: fails the request and closes its connection. */
  private abortRequest: ((error?: Error) => void) | undefined;
  /** undici's: reads on after `onData` returned false. */
  private resumeReading: (() => void) | undefined;
  private body: StreamedBody | undefined;
  private listening = false;
  /** Undefined once the reply is complete or failed, or its stream under way. */
  private deadline: NodeJS.Timeout | undefined;
  /** The core ends the deadline (`releaseDeadline`): the body's `streaming` does not. */
  private deadlineHeld = false;
  /** The deadline passed before undici gave us a way to cancel the request. */
  private expired: Error | undefined;
  private reply: DispatchedReply | undefined;

  constructor(
    private readonly request: HttpRequest,
    private readonly timeoutMs: number,
    private readonly bufferLimit: number,
    private readonly mapFailure: RequestFailureMapper,
  ) {
    this.response = promiseOn(this);
    // A longer timeout than a timer holds is as good as none.
    if (timeoutMs > 0) this.deadline = setTimeout(passDeadline, Math.min(timeoutMs, MAX_TIMER_MS), this);
  }

  onConnect(abort: (error?: Error) => void): void {
    const { abort: hook, signal } = this.request;
    if (this.expired !== undefined) return abort(this.expired);
    // Gone while the request waited for a connection: cancel it before a byte is sent.
    if (hook?.aborted || signal?.aborted) return abort(abortReasonOf(this.request) as Error);
    this.abortRequest = abort;
    if (hook === undefined && signal === undefined) return;
    this.listening = true;
    hook?.addAbortListener(this);
    signal?.addEventListener("abort", this);
  }

  onHeaders(status: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (status < 200) return true; // 1xx: the reply is still to come
    this.resumeReading = resume;
    const body = new StreamedBody(this, this.bufferLimit);
    this.body = body;
    this.reply = new DispatchedReply(status, rawHeaders, body);
    const resolve = this.resolve!;
    this.resolve = this.reject = undefined;
    resolve(this.reply);
    return true;
  }

  onData(chunk: Buffer): boolean {
    return this.body!.push(chunk);
  }

  onComplete(): void {
    this.stopListening();
    this.endDeadline();
    this.body!.end();
  }

  onError(error: Error): void {
    this.stopListening();
    this.endDeadline();
    // undici's part timers are the route's idle limit when it is the shorter: the error says so.
    const idle = this.request.idleTimeoutMs;
    const code = (error as { code?: string }).code;
    if (idle && (this.timeoutMs === 0 || idle < this.timeoutMs) && (code === "UND_ERR_BODY_TIMEOUT" || code === "UND_ERR_HEADERS_TIMEOUT")) {
      (error as { idleTimeoutMs?: number }).idleTimeoutMs = idle;
    }
    if (this.body !== undefined) return this.body.fail(error);
    const reject = this.reject;
    if (reject === undefined) return;
    this.resolve = this.reject = undefined;
    reject(this.mapFailure(error, this.request, this.timeoutMs));
  }

  /** The caller went away (its `AbortHook`): fail the request, or its body, with an `AbortError`. */
  onAbort(): void {
    // undici calls `onError` from within `abort`, which settles the caller's side.
    this.abortRequest?.(abortReasonOf(this.request) as Error);
  }

  /** The same for an `AbortSignal`: the handler is its own event listener, so no closure is made. */
  handleEvent(): void {
    this.onAbort();
  }

  pull(): void {
    this.resumeReading?.();
  }

  cancel(reason: Error): void {
    this.abortRequest?.(reason);
  }

  streaming(): void {
    if (!this.deadlineHeld) this.endDeadline();
  }

  holdDeadline(): void {
    this.deadlineHeld = true;
  }

  releaseDeadline(): void {
    this.deadlineHeld = false;
    this.endDeadline();
  }

  declaredLength(): number | undefined {
    const value = this.reply?.headers["content-length"];
    const length = typeof value === "string" ? Number(value) : NaN;
    return Number.isFinite(length) ? length : undefined;
  }

  /** The deadline passed: the request fails as undici's own timeouts fail it, and its connection is closed. */
  expire(): void {
    this.deadline = undefined;
    const error = Object.assign(new Error(`No complete reply within ${this.timeoutMs} ms.`), { code: DEADLINE_CODE });
    if (this.abortRequest !== undefined) return this.abortRequest(error);
    // Still waiting for a connection: the caller hears now; `onConnect` cancels the request later.
    this.expired = error;
    this.stopListening();
    const reject = this.reject;
    if (reject === undefined) return;
    this.resolve = this.reject = undefined;
    reject(this.mapFailure(error, this.request, this.timeoutMs));
  }

  private endDeadline(): void {
    if (this.deadline === undefined) return;
    clearTimeout(this.deadline);
    this.deadline = undefined;
  }

  private stopListening(): void {
    if (!this.listening) return;
    this.listening = false;
    this.request.abort?.removeAbortListener(this);
    this.request.signal?.removeEventListener("abort", this);
  }
}
