/**
 * API-key authentication (contract §5), the only place that reads `Authorization`. Keys are kept
 * as SHA-256 digests: the lookup compares digests, so timing reveals nothing about a key, and the
 * key itself is never stored in a structure that might be logged.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { invalidApiKey } from "./errors.ts";

/** Who is calling: the scopes rate limits and logs use. */
export interface Principal {
  app: string;
  developer: string;
  /** How the caller proved itself. */
  scheme: "api_key";
}

export interface ApiKeyEntry {
  key: string;
  app: string;
  developer: string;
}

const BEARER = /^bearer[ \t]+(\S+)[ \t]*$/i;

function digest(key: string): Buffer {
  return createHash("sha256").update(key).digest();
}

export type Authenticate = (authorization: string | null) => Principal;

/**
 * Builds the authenticator from the configured keys.
 * @example
 * const authenticate = createAuthenticator([{ key: "sk-local", app: "demo", developer: "me" }]);
 * authenticate("Bearer sk-local"); // { app: "demo", developer: "me", scheme: "api_key" }
 */
export function createAuthenticator(keys: readonly ApiKeyEntry[]): Authenticate {
  const byDigest = new Map<string, { digest: Buffer; principal: Principal }>();
  for (const entry of keys) {
    const d = digest(entry.key);
    byDigest.set(d.toString("base64"), { digest: d, principal: { app: entry.app, developer: entry.developer, scheme: "api_key" } });
  }
  return function authenticate(authorization) {
    const match = authorization ? BEARER.exec(authorization) : null;
    if (!match) throw invalidApiKey();
    const presented = digest(match[1]!);
    const found = byDigest.get(presented.toString("base64"));
    if (!found || !timingSafeEqual(found.digest, presented)) throw invalidApiKey();
    return found.principal;
  };
}
