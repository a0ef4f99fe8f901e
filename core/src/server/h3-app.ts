/**
 * The router as an h3 app (`router.app`), for h3 users who compose apps: every request goes to the
 * fetch adapter. h3 is loaded on first use only: the Node server and the fetch handler do not need
 * it, and it costs memory at start.
 */
import { createRequire } from "node:module";
import type { H3, H3Event } from "h3";

/** The request as the router must see it: mounted under a base, h3 strips the base from `event.url` only. */
function routerRequest(event: H3Event): Request {
  const request = event.req as Request;
  if (event.url.href === request.url) return request;
  const hasBody = request.method !== "GET" && request.method !== "HEAD";
  return new Request(event.url, { method: request.method, headers: request.headers, signal: request.signal, ...(hasBody && { body: request.body, duplex: "half" }) } as RequestInit);
}

/** An h3 app that serves every path through `fetch`. */
export function createH3App(fetch: (request: Request) => Promise<Response>): H3 {
  // Synchronous, so that `router.app` can stay a plain property; Node ≥ 20.19 requires ES modules.
  const { H3: H3App } = createRequire(import.meta.url)("h3") as typeof import("h3");
  // Middleware, not a route: h3 strips a mount's base for middleware, and every path is ours.
  return new H3App().use(function serveWithModelmux(event) {
    return fetch(routerRequest(event));
  });
}
