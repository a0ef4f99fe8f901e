/**
 * The one place a reply is written: the router's outermost middleware, for what the layers after it
 * return or throw (an `auth` 401), and `respond`, which each route calls with its endpoint (a
 * reply, an endpoint's 400, a bug's 500). A reply is written straight to the socket when the
 * request came through `router.handler` (the app then gets h3's "handled" marker), or made a web
 * `Response` otherwise. What an embedder's own handler or middleware returns
 * (a `Response`, a string) is left to h3. It is not among the middleware an embedder composes:
 * without it nothing would answer in the error envelope.
 */
import type { H3Event, Middleware } from "h3";
import { exchangeOf } from "./event-exchange.ts";
import type { Exchange } from "./exchange.ts";
import { NodeExchange } from "./node-exchange.ts";
import { writeNodeError, writeNodeReply, type ReplyWriting } from "./node-reply.ts";
import { isReply, type Reply } from "./reply.ts";
import { isOwnResponse, webErrorReply, webReply } from "./web-reply.ts";

/** What h3 takes as "the response is already written" (`kHandled` in h3). */
export const HANDLED = Symbol.for("h3.handled");

export interface ReplyWriter {
  /** The outermost middleware: writes what the layers after it return or throw. */
  middleware: Middleware;
  /**
   * Runs a route's endpoint and answers with its reply. On `router.handler` the app is told
   * "handled" at once and the reply is written when ready: no layer of the app waits on a promise
   * (h3 adds one per middleware to a route that returns one).
   */
  respond(x: Exchange, endpoint: (x: Exchange) => Reply | Promise<Reply>): unknown;
  /** Writes `error` as the reply to `event`: for h3's `onError`, which sees what escapes the middleware. */
  writeError(event: H3Event, error: unknown): unknown;
}

export function createReplyWriter(w: ReplyWriting): ReplyWriter {
  function written(x: Exchange, value: unknown): unknown {
    if (!isReply(value)) {
      // A Response of an embedder's: it ends here (the router's own end when their body does).
      if (value instanceof Response && !isOwnResponse(value)) x.end(value.status);
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

  function respondOnNode(x: NodeExchange, reply: Reply | Promise<Reply>): typeof HANDLED {
    x.taken = true;
    if (reply instanceof Promise) {
      reply.then(
        (value) => writeNodeReply(w, x, value),
        (error: unknown) => writeNodeError(w, x, error),
      );
    } else writeNodeReply(w, x, reply);
    return HANDLED;
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
    respond(x, endpoint) {
      let reply: Reply | Promise<Reply>;
      try {
        reply = endpoint(x);
      } catch (error) {
        return failed(x, error);
      }
      if (x instanceof NodeExchange) return respondOnNode(x, reply);
      return reply instanceof Promise ? reply.then((value) => webReply(x, value), (error: unknown) => webErrorReply(w.logger, x, error)) : webReply(x, reply);
    },
    writeError(event, error) {
      return failed(exchangeOf(event), error);
    },
  };
}
