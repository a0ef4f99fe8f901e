/**
 * The router as an h3 app (`router.app`), for h3 users who compose apps: every request goes to the
 * fetch adapter. h3 is loaded on first use only: the Node server and the fetch handler do not need
 * it, and it costs memory at start.
 */
import { createRequire } from "node:module";
import type { H3 } from "h3";

/** An h3 app that serves every path through `fetch`. */
export function createH3App(fetch: (request: Request) => Promise<Response>): H3 {
  // Synchronous, so that `router.app` can stay a plain property; Node ≥ 20.19 requires ES modules.
  const { H3: H3App } = createRequire(import.meta.url)("h3") as typeof import("h3");
  return new H3App().all("/**", function serveWithModelmux(event) {
    return fetch(event.req as Request);
  });
}
