/**
 * "The client went away", told to whoever waits on an upstream call. An `AbortController` with a
 * listener costs about 2.5 µs per request (more than parsing and serialising a chat body), so the
 * core keeps this small hook per request instead and makes an `AbortSignal` only when someone asks
 * for one (`Exchange.signal`, `ProviderCall.signal`).
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
class ControllerListener implements AbortListener {
  readonly controller = new AbortController();
  onAbort(): void {
    this.controller.abort(Object.assign(new Error("The client closed the connection."), { name: "AbortError" }));
  }
}

/**
 * The hook of one request: a flag and a short list of listeners (usually none or one), and the
 * `AbortSignal` that follows it, made on first use.
 */
export class RequestAbort implements AbortHook {
  aborted = false;
  private listeners: AbortListener[] | undefined;
  private signalListener: ControllerListener | undefined;

  addAbortListener(listener: AbortListener): void {
    if (this.aborted) {
      listener.onAbort();
      return;
    }
    (this.listeners ??= []).push(listener);
  }

  removeAbortListener(listener: AbortListener): void {
    const at = this.listeners?.indexOf(listener) ?? -1;
    if (at >= 0) this.listeners!.splice(at, 1);
  }

  /** Marks the request abandoned and tells every listener, once. */
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners) for (const listener of listeners) listener.onAbort();
  }

  /** An `AbortSignal` that aborts with this hook, for code that takes only signals. */
  get signal(): AbortSignal {
    if (!this.signalListener) {
      this.signalListener = new ControllerListener();
      this.addAbortListener(this.signalListener);
    }
    return this.signalListener.controller.signal;
  }
}
