/**
 * The router's outermost middleware, and the one place a reply is written: it runs everything after
 * it (the other middleware, then the route) and turns what comes back into bytes. An endpoint's
 * reply, or anything thrown (an `auth` 401, an endpoint's 400, a bug's 500), is written straight to
 * the socket when the request came through `router.handler` (the app then gets h3's "handled"
 * marker), or made a web `Response` otherwise. What an embedder's own handler or middleware returns
 * (a `Response`, a string) is left to h3. It is not among the middleware an embedder composes:
 * without it nothing would answer in the error envelope.
 */
import type { H3Event, Middleware } from "h3";
import { exchangeOf } from "./event-exchange.ts";
import type { Exchange } from "./exchange.ts";
import { NodeExchange } from "./node-exchange.ts";
import { writeNodeError, writeNodeReply, type ReplyWriting } from "./node-reply.ts";
import { isReply } from "./reply.ts";
import { webErrorReply, webReply } from "./web-reply.ts";

/** What h3 takes as "the response is already written" (`kHandled` in h3). */
export const HANDLED = Symbol.for("h3.handled");

export interface ReplyWriter {
  middleware: Middleware;
  /** Writes `error` as the reply to `event`: for h3's `onError`, which sees what escapes the middleware. */
  writeError(event: H3Event, error: unknown): unknown;
}

export function createReplyWriter(w: ReplyWriting): ReplyWriter {
  function written(x: Exchange, value: unknown): unknown {
    if (!isReply(value)) {
      if (value instanceof Response) x.end(value.status);
      return value;
    }
    if (x instanceof NodeExchange) {
      writeNodeReply(w, x, value);
      return HANDLED;
    }
    return webReply(x, value);
  }

  function failed(x: Exchange, error: unknown): unknown {
    if (x instanceof NodeExchange) {
      writeNodeError(w, x, error);
      return HANDLED;
    }
    return webErrorReply(w.logger, x, error);
  }

  return {
    middleware: function writeReplies(event, next) {
      const x = exchangeOf(event);
      let value: unknown;
      try {
        value = next();
      } catch (error) {
        return failed(x, error);
      }
      return value instanceof Promise ? value.then((resolved) => written(x, resolved), (error: unknown) => failed(x, error)) : written(x, value);
    },
    writeError(event, error) {
      return failed(exchangeOf(event), error);
    },
  };
}
