/**
 * Resolves `auth.jwt` (contract §5) into the verifier's settings: defaults filled, durations in
 * ms, and the JWKS URL checked. Keys are fetched over https; plain http only from this machine
 * (a local identity provider in development and tests), where nobody can swap the keys in transit.
 */
import type { JwtSettings } from "../auth/jwt.ts";
import { ConfigError } from "./config-error.ts";
import type { ModelmuxConfig } from "./types.ts";
import { parseDuration } from "./units.ts";

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

function jwksUrl(value: string): URL {
  const path = "auth.jwt.jwks_url";
  if (!URL.canParse(value)) throw new ConfigError(`${path}: must be an absolute URL`);
  const url = new URL(value);
  if (url.protocol === "https:") return url;
  if (url.protocol === "http:" && (LOOPBACK_HOSTS.has(url.hostname) || url.hostname.startsWith("127."))) return url;
  throw new ConfigError(`${path}: must be an https URL (plain http is allowed only for localhost)`);
}

export function resolveJwt(config: ModelmuxConfig): JwtSettings | undefined {
  const jwt = config.auth?.jwt;
  if (!jwt) return undefined;
  const settings: JwtSettings = {
    issuer: jwt.issuer,
    audience: jwt.audience,
    jwksUrl: jwksUrl(jwt.jwks_url),
    appClaim: jwt.app_claim ?? "azp",
    developerClaim: jwt.developer_claim ?? "sub",
    clockToleranceS: parseDuration(jwt.clock_tolerance ?? "5s") / 1000,
    jwksTimeoutMs: parseDuration(jwt.jwks_timeout ?? "5s"),
    jwksCooldownMs: parseDuration(jwt.jwks_cooldown ?? "30s"),
    jwksCacheMaxAgeMs: parseDuration(jwt.jwks_cache_max_age ?? "10m"),
  };
  if (!(settings.jwksTimeoutMs > 0)) throw new ConfigError("auth.jwt.jwks_timeout: must be longer than 0 (e.g. 5s)");
  if (jwt.algorithms) settings.algorithms = jwt.algorithms;
  return settings;
}
