/**
 * `requestId()`: gives each request its id, echoed as `x-request-id` on its reply and logged with
 * it. A client's own id is kept when it is short and plain, so it cannot forge log lines.
 */
import { randomUUID } from "node:crypto";
import type { Middleware } from "h3";
import { exchangeOf } from "../event-exchange.ts";

const CLIENT_REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The request id of a request: the client's when plain, else a new UUID. */
export function requestIdFor(given: string | undefined): string {
  return given !== undefined && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
}

export interface RequestIdOptions {
  /** The request header a client's own id is read from. Default: `x-request-id`. */
  header?: string;
}

/**
 * @example createRouter(config, { middleware: (m) => m.map((f) => (f.name === "requestId" ? requestId({ header: "x-correlation-id" }) : f)) })
 */
export function requestId(options: RequestIdOptions = {}): Middleware {
  const header = (options.header ?? "x-request-id").toLowerCase();
  return function requestId(event, next) {
    const x = exchangeOf(event);
    x.requestId = requestIdFor(x.header(header));
    return next();
  };
}
