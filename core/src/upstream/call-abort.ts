/**
 * "The client went away", told to whoever waits on an upstream call. An `AbortController` with a
 * listener costs about 2.5 µs per request (more than parsing and serialising a chat body), so the
 * core keeps this small hook per request instead and makes an `AbortSignal` only when someone asks
 * for one (`Exchange.signal`, `ProviderCall.signal`). The request's hook is
 * `server/request-abort.ts`; here are the hook the upstream client listens to, and the hook of one
 * provider call, which follows the request's.
 */

/** Told once when the caller goes away. An object, not a function: a handler class implements it, no closure per call. */
export interface AbortListener {
  onAbort(): void;
}

/** The core's per-request abort notice; `postUpstream`/`sendUpstream` hand it to the HTTP client. */
export interface AbortHook {
  readonly aborted: boolean;
  /** `listener.onAbort()` runs once when the caller goes away (at once if it already has). */
  addAbortListener(listener: AbortListener): void;
  removeAbortListener(listener: AbortListener): void;
}

/** An `AbortListener` that aborts a controller: how a lazily made `AbortSignal` follows a hook. */
export class ControllerListener implements AbortListener {
  readonly controller = new AbortController();
  /** `call`: the hook of a provider call, which the core may end itself (`CallAbort.end`). */
  constructor(private readonly call?: CallAbort) {}
  onAbort(): void {
    const message = this.call?.ended ? "The router stopped reading the reply." : "The client closed the connection.";
    this.controller.abort(Object.assign(new Error(message), { name: "AbortError" }));
  }
}

/**
 * The hook of one provider call (`provider-call.ts`): it fires when the client goes away (it
 * follows the request's hook) and when the core ends the call itself (`end`): once the core has
 * the whole answer and stops reading a stream whose upstream keeps its connection open, which then
 * closes at once rather than at the provider's `timeout`. The request's own hook (`aborted`, which
 * says the client left) is not fired by `end`. It listens to the request's hook only while it has
 * listeners itself: nothing is added to a request until an upstream call listens.
 */
export class CallAbort implements AbortHook, AbortListener {
  /** `end` was called. */
  ended = false;
  private listeners: AbortListener[] | undefined;
  /** Listening to the request's hook. */
  private following = false;
  private signalListener: ControllerListener | undefined;

  constructor(private readonly request: AbortHook) {}

  get aborted(): boolean {
    return this.ended || this.request.aborted;
  }

  addAbortListener(listener: AbortListener): void {
    if (this.aborted) {
      listener.onAbort();
      return;
    }
    (this.listeners ??= []).push(listener);
    if (this.following) return;
    this.following = true;
    this.request.addAbortListener(this);
  }

  removeAbortListener(listener: AbortListener): void {
    const listeners = this.listeners;
    const at = listeners?.indexOf(listener) ?? -1;
    if (at < 0) return;
    listeners!.splice(at, 1);
    if (listeners!.length === 0) this.unfollow();
  }

  /** The request's hook fired: the client went away. */
  onAbort(): void {
    this.following = false;
    this.fire();
  }

  /** Fires this hook, and not the request's: the core no longer needs the call's upstream reply. */
  end(): void {
    if (this.aborted) return;
    this.ended = true;
    this.unfollow();
    this.fire();
  }

  /** An `AbortSignal` that aborts with this hook, for code that takes only signals. */
  get signal(): AbortSignal {
    if (!this.signalListener) {
      this.signalListener = new ControllerListener(this);
      this.addAbortListener(this.signalListener);
    }
    return this.signalListener.controller.signal;
  }

  private unfollow(): void {
    if (!this.following) return;
    this.following = false;
    this.request.removeAbortListener(this);
  }

  private fire(): void {
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners) for (const listener of listeners) listener.onAbort();
  }
}
