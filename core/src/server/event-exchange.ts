/**
 * The one `Exchange` of an h3 event, kept in the event's context. `router.handler` puts a
 * `NodeExchange` there before the app sees the request (so nothing reads the body or the URL
 * through web objects on that path); any other way in gets a `WebExchange`, made on first use.
 */
import type { H3Event } from "h3";
import type { Exchange } from "./exchange.ts";
import { WebExchange } from "./web-exchange.ts";

const kExchange = Symbol.for("modelmux.exchange");

type ExchangeContext = { [kExchange]?: Exchange };

/** The context a request is given before it enters the app, carrying its exchange. */
export function contextWith(x: Exchange): ExchangeContext {
  return { [kExchange]: x };
}

/**
 * The exchange of `event`, for middleware and route handlers.
 * @example const x = exchangeOf(event); x.principal?.app;
 */
export function exchangeOf(event: H3Event): Exchange {
  const context = event.context as ExchangeContext;
  return context[kExchange] ?? (context[kExchange] = new WebExchange(event));
}
