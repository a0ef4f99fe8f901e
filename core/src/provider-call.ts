/**
 * The `ProviderCall` the core hands a provider: the bare model, the timeout, the request id, and
 * the request's abort notice as a cheap hook (`abort`, which `postUpstream`/`sendUpstream` pass to
 * the HTTP client) and as an `AbortSignal` made only if a plugin reads `signal`.
 */
import type { AbortHook } from "./http/abort-hook.ts";
import type { Exchange } from "./http/exchange.ts";
import type { ProviderCall } from "./plugin.ts";

class CoreCall implements ProviderCall {
  readonly abort: AbortHook;
  readonly requestId: string;

  constructor(
    private readonly x: Exchange,
    readonly model: string,
    readonly timeoutMs: number,
  ) {
    this.abort = x.abort;
    this.requestId = x.requestId;
  }

  get signal(): AbortSignal {
    return this.x.signal;
  }
}

/** The call of request `x` to a provider for `model` (empty for a forwarded call that names no model). */
export function providerCall(x: Exchange, model: string, timeoutMs: number): ProviderCall {
  return new CoreCall(x, model, timeoutMs);
}
