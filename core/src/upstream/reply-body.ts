/**
 * The body of an upstream reply, fed by undici's dispatcher callbacks: chunks go into a queue that
 * async iteration and `text()` read. Lighter than undici's `BodyReadable` (a Node Readable, with
 * its events, buffer list and promise per layer): a small JSON reply that arrived in one socket read
 * costs its `text()` one `toString` and one resolved promise. What a reader may call is `HttpBody`
 * (`client.ts`).
 */
import type { HttpBody } from "./client.ts";
import { UpstreamBodyTooLarge } from "./body-limit.ts";
import { deliverSoon, type Deliverable } from "../utils/deliver-soon.ts";
import { promiseOn, type Settlers } from "../utils/promise-on.ts";

/** What a body needs from the request it belongs to. */
export interface BodySource {
  /** Reading was paused (a `false` from `push`) and may go on. */
  pull(): void;
  /** The reader went away before the reply was complete: cancel the request. */
  cancel(reason: Error): void;
  /** The whole-wait bound is over: the reader has a stream's first event, or its first chunk (`HttpBody.keepDeadline`). */
  streaming(): void;
  /** The core, not the reader, ends the whole-wait bound (`provider-call.ts`): `streaming` is ignored until `releaseDeadline`. */
  holdDeadline(): void;
  /** The core has the stream's first chunk to send: the whole-wait bound is over. */
  releaseDeadline(): void;
  /** The reply's `content-length`, when it sent one. */
  declaredLength(): number | undefined;
}

/**
 * How many unread bytes a body holds before it asks undici to stop reading the socket (undici's own
 * body uses the same); the upstream then sees its writes block.
 */
const HIGH_WATER_MARK = 64 * 1024;

const OPEN = 0;
/** Every byte has arrived; some may still be queued. */
const COMPLETE = 1;
/** The reply broke off; the error is delivered to the next read. */
const FAILED = 2;
/** Destroyed, or the failure was delivered: reads end. */
const RELEASED = 3;

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });
const DONE_PROMISE = Promise.resolve(DONE);

/** The abort a body or request reports when its reader or caller went away: what an `AbortSignal` gives. */
export function abortError(): Error {
  return new DOMException("This operation was aborted", "AbortError");
}

function parseJson(text: string): unknown {
  return JSON.parse(text) as unknown;
}

/** The queued chunks as one buffer: a single chunk as is. */
function joined(chunks: Buffer[]): Buffer {
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

/**
 * A reply body fed by `push`, `end` and `fail`. It is its own async iterator (iterable once, like a
 * stream); each step yields every chunk queued by then as one buffer. A read that waits is answered
 * once undici has parsed the whole socket read (a microtask later), so the dozen events of one read
 * reach an SSE reader, and a proxy's client, in one step. Ending the iteration early (`break`)
 * destroys the body.
 */
export class StreamedBody implements HttpBody, AsyncIterator<Buffer, undefined>, Deliverable {
  private state = OPEN;
  private readonly queue: Buffer[] = [];
  private queued = 0;
  /** `push` returned false: the source waits for `pull`. */
  private paused = false;
  /** A `text()` or `bytes()` is waiting for the end: keep everything, never pause. */
  private collecting = false;
  /** What the waiting `whole` gets: text (`text()`) or bytes (`bytes()`). */
  private wholeAsText = true;
  /** The reader ends the whole-wait bound itself (`keepDeadline`). */
  private deadlineKept = false;
  /** A chunk has been handed to an iterating reader. */
  private started = false;
  /** Queued by `deliverSoon`. */
  private delivering = false;
  private error: unknown;
  /** A read waiting for the next chunk. */
  private read: Settlers<IteratorResult<Buffer, undefined>> = { resolve: undefined, reject: undefined };
  /** A `text()` or `bytes()` waiting for the end; made only then. */
  private whole: Settlers<string | Buffer> | undefined;

  constructor(
    /** The request: the core holds its deadline through it (`provider-call.ts`). */
    readonly source: BodySource,
    readonly bufferLimit: number,
  ) {}

  // --- the producer side (undici's callbacks) ---

  /** Adds a chunk; false asks the source to pause until `pull`. */
  push(chunk: Buffer): boolean {
    if (this.state !== OPEN) return true;
    this.queue.push(chunk);
    this.queued += chunk.length;
    if (this.collecting && this.queued > this.bufferLimit) {
      this.overflow();
      return true;
    }
    if (this.read.resolve !== undefined && !this.delivering) {
      this.delivering = true;
      deliverSoon(this);
    }
    if (this.collecting || this.queued < HIGH_WATER_MARK) return true;
    this.paused = true;
    return false;
  }

  /** Every chunk has been pushed. */
  end(): void {
    if (this.state !== OPEN) return;
    this.state = COMPLETE;
    // A waiting read that has chunks to come (`deliver`) ends at its next call.
    const read = this.queue.length === 0 ? this.read.resolve : undefined;
    const whole = this.whole?.resolve;
    if (read === undefined && whole === undefined) return;
    this.state = RELEASED;
    this.settleRead();
    this.whole = undefined;
    read?.(DONE);
    whole?.(this.wholeAsText ? this.take().toString("utf8") : this.take());
  }

  /** The reply broke off: a waiting read or `text()` rejects with `error`, or the next one will. */
  fail(error: unknown): void {
    if (this.state !== OPEN) return;
    this.state = FAILED;
    this.error = error;
    this.queue.length = 0;
    this.queued = 0;
    this.rejectWaiting(error);
  }

  /** Answers a waiting read with what is queued (see `deliverSoon`). */
  deliver(): void {
    this.delivering = false;
    const resolve = this.read.resolve;
    // Failed or destroyed meanwhile: the read was settled then.
    if (resolve === undefined || this.queue.length === 0) return;
    this.settleRead();
    const chunk = this.take();
    if (this.paused) this.resume();
    if (!this.started) this.start();
    resolve({ done: false, value: chunk });
  }

  // --- the consumer side ---

  get destroyed(): boolean {
    return this.state === RELEASED || this.state === FAILED || (this.state === COMPLETE && this.queue.length === 0);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<Buffer, undefined>> {
    if (this.read.resolve !== undefined || this.whole !== undefined) return Promise.reject(new Error("The body is already being read."));
    if (this.queue.length > 0) {
      const chunk = this.take();
      if (this.paused) this.resume();
      if (!this.started) this.start();
      return Promise.resolve({ done: false, value: chunk });
    }
    switch (this.state) {
      case OPEN:
        return promiseOn(this.read);
      case FAILED:
        this.state = RELEASED;
        return Promise.reject(this.error);
      default:
        this.state = RELEASED;
        return DONE_PROMISE;
    }
  }

  /** Ending the iteration early (`break`, a throw in the loop) destroys the body. */
  return(): Promise<IteratorResult<Buffer, undefined>> {
    this.destroy();
    return DONE_PROMISE;
  }

  /** Rejects with an `UpstreamBodyTooLarge`, at once, for a body that is or says it is over `bufferLimit`. */
  text(): Promise<string> {
    return this.collect(true) as Promise<string>;
  }

  /** `text()`'s bytes, undecoded: for a reply passed on as it came. */
  bytes(): Promise<Buffer> {
    return this.collect(false) as Promise<Buffer>;
  }

  private collect(asText: boolean): Promise<string | Buffer> {
    switch (this.state) {
      case COMPLETE: {
        this.state = RELEASED;
        if (this.queued > this.bufferLimit) return Promise.reject(this.tooLarge());
        const bytes = this.take();
        return Promise.resolve(asText ? bytes.toString("utf8") : bytes);
      }
      case FAILED:
        this.state = RELEASED;
        return Promise.reject(this.error);
      case RELEASED:
        return Promise.reject(new TypeError("The body was already read or destroyed."));
    }
    if (this.whole !== undefined || this.read.resolve !== undefined) return Promise.reject(new Error("The body is already being read."));
    if (this.queued > this.bufferLimit || (this.source.declaredLength() ?? 0) > this.bufferLimit) {
      // Nothing more is read: the request is cancelled before the rest can arrive.
      const error = this.tooLarge();
      this.destroy(error);
      return Promise.reject(error);
    }
    this.collecting = true;
    this.wholeAsText = asText;
    this.whole = { resolve: undefined, reject: undefined };
    const whole = promiseOn(this.whole);
    if (this.paused) this.resume();
    return whole;
  }

  json(): Promise<unknown> {
    return this.text().then(parseJson);
  }

  keepDeadline(): void {
    this.deadlineKept = true;
  }

  markStreaming(): void {
    if (this.state === OPEN) this.source.streaming();
  }

  destroy(error?: Error): void {
    const state = this.state;
    if (state === RELEASED) return;
    this.state = RELEASED;
    this.queue.length = 0;
    this.queued = 0;
    if (state !== OPEN) return;
    // The reply is still arriving: whoever waits hears why, and the request is cancelled.
    const reason = error ?? abortError();
    this.rejectWaiting(reason);
    this.source.cancel(reason);
  }

  private tooLarge(): UpstreamBodyTooLarge {
    this.queue.length = 0;
    this.queued = 0;
    return new UpstreamBodyTooLarge(this.bufferLimit, "reply");
  }

  /** A `text()` outgrew the limit: it fails, what was queued is dropped, and the request is cancelled. */
  private overflow(): void {
    const error = this.tooLarge();
    this.state = FAILED;
    this.error = error;
    this.rejectWaiting(error);
    this.source.cancel(error);
  }

  /** The first chunk went to an iterating reader: unless it keeps the deadline, the whole-wait bound ends. */
  private start(): void {
    this.started = true;
    if (!this.deadlineKept && this.state === OPEN) this.source.streaming();
  }

  /** Every queued chunk, as one buffer; the queue array is kept for reuse. */
  private take(): Buffer {
    const chunk = joined(this.queue);
    this.queue.length = 0;
    this.queued = 0;
    return chunk;
  }

  private resume(): void {
    this.paused = false;
    this.source.pull();
  }

  private settleRead(): void {
    this.read.resolve = this.read.reject = undefined;
  }

  private rejectWaiting(error: unknown): void {
    const read = this.read.reject;
    const whole = this.whole?.reject;
    this.settleRead();
    this.whole = undefined;
    if (read !== undefined || whole !== undefined) this.state = RELEASED;
    read?.(error);
    whole?.(error);
  }
}
