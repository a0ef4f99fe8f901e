/**
 * The steps every request takes before its endpoint, the same for both adapters: authentication
 * on `/v1/` paths (docs/interface.md, "Authentication"; `/healthz` and image URLs need none), then the route table.
 */
import type { Authenticate } from "./auth/authenticate.ts";
import type { Exchange } from "./exchange.ts";
import type { Reply } from "./reply.ts";
import type { RouteTable } from "./route-table.ts";

/** Runs the request's endpoint; throws what becomes its error reply. */
export type Dispatch = (x: Exchange) => Promise<Reply>;

export function createDispatch(authenticate: Authenticate, routes: RouteTable): Dispatch {
  return async function dispatch(x) {
    if (x.path.startsWith("/v1/")) {
      // An API key is checked synchronously; only a JWT (auth.jwt) gives a promise.
      const principal = authenticate(x.header("authorization") ?? null);
      x.principal = principal instanceof Promise ? await principal : principal;
    }
    const { handler, params } = routes.match(x.method, x.path);
    x.params = params;
    return handler(x);
  };
}
