/**
 * Resolves `auth.jwt` (README, "Identity-provider tokens") into the verifier's settings: defaults
 * filled, durations in ms, and the JWKS URL checked. Keys are fetched over https; plain http only
 * from this machine (a local identity provider in development and tests), where nobody can swap the
 * keys in transit.
 */
import { isIPv4 } from "node:net";
import type { JwtSettings } from "../server/auth/jwt.ts";
import { ConfigError, ConfigProblems } from "./config-error.ts";
import type { ModelmuxConfig } from "./types.ts";
import { parseDuration, parseTimer } from "./units.ts";

/**
 * True for a URL host that can only be this machine: `localhost`, an IPv4 address in 127.0.0.0/8
 * or `[::1]`. The WHATWG parser has already lower-cased the name and written IP literals in their
 * canonical form (`0x7f.1` → `127.0.0.1`, `[0:0::1]` → `[::1]`), so exact comparisons suffice; a
 * name that merely starts with `127.` (`127.evil.example`) is a DNS name like any other.
 */
function isLoopbackHost(hostname: string): boolean {
  if (hostname === "localhost" || hostname === "[::1]") return true;
  return isIPv4(hostname) && hostname.startsWith("127.");
}

function jwksUrl(value: string): URL {
  const path = "auth.jwt.jwks_url";
  if (!URL.canParse(value)) throw new ConfigError(`${path}: must be an absolute URL`);
  const url = new URL(value);
  if (url.protocol === "https:") return url;
  if (url.protocol === "http:" && isLoopbackHost(url.hostname)) return url;
  throw new ConfigError(`${path}: must be an https URL (plain http is allowed only for localhost, 127.0.0.0/8 and [::1])`);
}

export function resolveJwt(config: ModelmuxConfig): JwtSettings | undefined {
  const jwt = config.auth?.jwt;
  if (!jwt) return undefined;
  const problems = new ConfigProblems();
  const url = problems.check(() => jwksUrl(jwt.jwks_url));
  const jwksTimeoutMs = problems.check(() => parseTimer(jwt.jwks_timeout ?? "5s", "auth.jwt.jwks_timeout"));
  if (jwksTimeoutMs === 0) problems.add("auth.jwt.jwks_timeout: must be longer than 0 (e.g. 5s)");
  problems.throwIfAny();
  const settings: JwtSettings = {
    issuer: jwt.issuer,
    audience: jwt.audience,
    jwksUrl: url!,
    appClaim: jwt.app_claim ?? "azp",
    developerClaim: jwt.developer_claim ?? "sub",
    clockToleranceS: parseDuration(jwt.clock_tolerance ?? "5s") / 1000,
    jwksTimeoutMs: jwksTimeoutMs!,
    jwksCooldownMs: parseDuration(jwt.jwks_cooldown ?? "30s"),
    jwksCacheMaxAgeMs: parseDuration(jwt.jwks_cache_max_age ?? "10m"),
  };
  if (jwt.algorithms) settings.algorithms = jwt.algorithms;
  return settings;
}
