/**
 * "The client went away": the hook of one incoming request, which the Node entry and the web
 * exchange fire when the client leaves before its reply is written. What listens to it, and why it is not an
 * `AbortController`: `upstream/call-abort.ts`.
 */
import { ControllerListener, type AbortHook, type AbortListener } from "../upstream/call-abort.ts";

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
