/**
 * The `ProviderCall` the core hands a provider: the bare model, the timeout, the request id, and
 * the call's abort notice as a cheap hook (`abort`, which `postUpstream`/`sendUpstream` pass to
 * the HTTP client) and as an `AbortSignal` made only if a plugin reads `signal`. The notice fires
 * when the client goes away, and when the core ends the call itself (`cancel`): the core's own
 * side of a call, which plugins do not see.
 */
import { CallAbort } from "./http/abort-hook.ts";
import type { Exchange } from "./http/exchange.ts";
import type { ProviderCall } from "./plugin.ts";

/** A provider call as the core holds it: what the plugin gets, and the core's controls of it. */
export class CoreCall implements ProviderCall {
  readonly abort: CallAbort;
  readonly requestId: string;

  constructor(
    x: Exchange,
    readonly model: string,
    readonly timeoutMs: number,
  ) {
    this.abort = new CallAbort(x.abort);
    this.requestId = x.requestId;
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /**
   * The core stopped reading the provider's reply before its end (a stream whose answer is whole,
   * and whose upstream holds its connection open): the upstream requests made with this call's
   * abort are cancelled. The client is not gone: the request's own hook does not fire.
   */
  cancel(): void {
    this.abort.end();
  }
}

/** The call of request `x` to a provider for `model` (empty for a forwarded call that names no model). */
export function providerCall(x: Exchange, model: string, timeoutMs: number): CoreCall {
  return new CoreCall(x, model, timeoutMs);
}
