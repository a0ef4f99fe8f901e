/**
 * The guard of the admin endpoints (docs/interface.md, "Authentication"): a route's handler that
 * only an admin key reaches. Without a valid credential the request gets the usual 401
 * `invalid_api_key`; with a valid one that is not an admin key (an API key without `admin: true`,
 * or any identity-provider token), 403 `permission_error` / `admin_required`.
 *
 * The guard authenticates the request itself when no middleware did (the `auth` middleware covers
 * `/v1/` only, and an admin endpoint may be outside it), so an admin route is guarded wherever it
 * is and whatever middleware an embedder composed.
 */
import { adminRequired } from "../../errors.ts";
import type { Exchange } from "../exchange.ts";
import type { Handler } from "../route-handlers.ts";
import type { Authenticate, Principal } from "./authenticate.ts";

function admitted(x: Exchange, principal: Principal, handler: Handler): ReturnType<Handler> {
  // Kept on the exchange whoever found it, so the access log names the caller of a refused request too.
  x.principal = principal;
  if (!principal.admin) throw adminRequired(principal.scheme);
  return handler(x);
}

/**
 * Wraps an admin endpoint's handler: the caller is the request's principal, or the one
 * `authenticate` finds in its `Authorization` header; only an admin key gets through.
 * @example
 * { path: "/metrics", methods: getAndHead(requireAdmin(ctx.authenticate, metricsHandler)) }
 */
export function requireAdmin(authenticate: Authenticate, handler: Handler): Handler {
  return function adminOnly(x) {
    const principal = x.principal ?? authenticate(x.header("authorization") ?? null);
    if (principal instanceof Promise) return principal.then((found) => admitted(x, found, handler));
    return admitted(x, principal, handler);
  };
}
