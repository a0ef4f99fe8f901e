/**
 * A stream that failed after its headers: its status is already 200, so the exchange keeps the
 * error its client was sent as the stream's error event (the access log names it), and the log gets
 * one line. An ordinary upstream failure (a connection that broke, a timeout, the provider's error
 * event) is the provider's doing and needs no stack trace; a bug of ours keeps its stack.
 */
import type { ConsolaInstance } from "consola";
import { toModelmuxError } from "../errors.ts";
import type { Exchange } from "./exchange.ts";

/** Records and logs the failure of `x`'s stream; `what` names the stream (`stream of openai/gpt-4o`). */
export function streamFailed(logger: ConsolaInstance, x: Exchange, what: string, error: unknown): void {
  const failure = toModelmuxError(error);
  x.failure = failure;
  const line = `${what} failed mid-way: ${failure.code ?? failure.type}: ${failure.message}`;
  if (failure.code === "internal_error") logger.warn(line, { request_id: x.requestId }, failure.cause);
  else logger.warn(line, { request_id: x.requestId });
}
