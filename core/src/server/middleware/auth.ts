/**
 * `auth({ authenticate })`: who is calling, for the paths that need it (docs/interface.md,
 * "Authentication"): `/v1/` by default; `/healthz`, `/openapi.json` and image URLs need none. A request without a
 * valid API key or token is answered 401 before routing, so an unknown `/v1/` path tells a caller
 * without a key nothing.
 */
import type { Middleware } from "h3";
import type { Authenticate } from "../auth/authenticate.ts";
import { exchangeOf } from "../event-exchange.ts";

export interface AuthOptions {
  /** Checks the Authorization header (`createAuthenticator`): returns the principal or throws a 401. */
  authenticate: Authenticate;
  /** The paths that need it, by prefix. Default: `/v1/`. */
  prefix?: string;
}

export function auth(options: AuthOptions): Middleware {
  const { authenticate } = options;
  const prefix = options.prefix ?? "/v1/";
  return function auth(event, next) {
    const x = exchangeOf(event);
    if (!x.path.startsWith(prefix)) return next();
    // An API key is checked synchronously; only a JWT (auth.jwt) gives a promise.
    const principal = authenticate(x.header("authorization") ?? null);
    if (!(principal instanceof Promise)) {
      x.principal = principal;
      return next();
    }
    return principal.then((found) => {
      x.principal = found;
      return next();
    });
  };
}
