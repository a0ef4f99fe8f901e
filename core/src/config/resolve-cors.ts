/**
 * `server.cors` (README, "CORS"), checked once at start into the `cors` middleware's options: each
 * origin in the form browsers send in `Origin`, so that a request's is matched by plain equality.
 */
import type { CorsOptions } from "../server/middleware/cors.ts";
import { ConfigError } from "./config-error.ts";
import type { ModelmuxConfig } from "./types.ts";
import { parseTimer } from "./units.ts";

/** As long as Chrome keeps a preflight's answer at most; Firefox keeps one up to a day. */
const DEFAULT_MAX_AGE = "2h";

/**
 * `https://App.example.com:443/` → `https://app.example.com`, as a browser's `Origin` has it: the
 * host in lower case, no default port, no trailing slash. Anything more than an origin is refused.
 */
function origin(value: string, path: string): string {
  if (value === "*") throw new ConfigError(`${path}: "*" allows every origin as the whole value (origins: "*"), not as an item of the list`);
  const url = URL.canParse(value) ? new URL(value) : undefined;
  const plain = url && (url.protocol === "http:" || url.protocol === "https:") && !url.username && !url.password && !url.search && !url.hash && url.pathname === "/";
  if (!plain || /[?#]$/.test(value)) {
    throw new ConfigError(`${path}: '${value}' is not an origin: give the scheme, host and optional port a browser sends, e.g. https://app.example.com or http://localhost:5173`);
  }
  return url.origin;
}

/** The `cors` middleware's options, or undefined when `server.cors` is unset (then it is not in the chain at all). */
export function resolveCors(config: ModelmuxConfig): CorsOptions | undefined {
  const cors = config.server?.cors;
  if (!cors) return undefined;
  return {
    origins: cors.origins === "*" ? "*" : cors.origins.map((value, i) => origin(value, `server.cors.origins[${i}]`)),
    headers: (cors.headers ?? []).map((name) => name.toLowerCase()),
    maxAge: Math.ceil(parseTimer(cors.max_age ?? DEFAULT_MAX_AGE, "server.cors.max_age") / 1000),
  };
}
