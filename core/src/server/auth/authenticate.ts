/**
 * Authentication (docs/interface.md, "Authentication"), the only place that reads `Authorization`.
 * Two schemes:
 * - API keys, kept as SHA-256 digests: the lookup compares digests, so timing reveals nothing about
 *   a key, and the key itself is never stored in a structure that might be logged. Synchronous.
 * - identity-provider tokens (`auth.jwt`): a Bearer value that is not a configured key and has the
 *   shape of a JWT is verified against the provider's JWKS (`jwt.ts`). Asynchronous.
 */
import { hash, timingSafeEqual } from "node:crypto";
import { looksLikeJwt, type VerifyJwt } from "./jwt.ts";
import { invalidApiKey } from "../../errors.ts";
import type { CompletionOwner } from "../../plugin.ts";

/** Who is calling: the scopes rate limits and logs use. */
export interface Principal {
  app: string;
  developer: string;
  /**
   * How the caller proved itself: a configured API key, or an identity-provider token. Endpoints
   * that accept API keys only (`/v1/responses`) refuse `"jwt"` with a 401.
   */
  scheme: "api_key" | "jwt";
  /**
   * Whether the caller may use the admin endpoints (`requireAdmin`, `admin.ts`): an API key with
   * `admin: true` on its `auth.api_keys` entry. Never a token: no claim makes one admin.
   */
  admin: boolean;
}

export interface ApiKeyEntry {
  key: string;
  app: string;
  developer: string;
  /** `admin: true` on the key's `auth.api_keys` entry. Default false. */
  admin?: boolean;
}

const BEARER = /^bearer[ \t]+(\S+)[ \t]*$/i;

/** The key's SHA-256 in base64: one call, no Hash object (about 4× cheaper per request). */
function digest(key: string): string {
  return hash("sha256", key, "base64");
}

/**
 * Returns the caller, or throws the 401 `invalid_api_key` (docs/interface.md, "Authentication"). An
 * API key is answered synchronously; only a JWT (when `auth.jwt` is configured) returns a promise.
 */
export type Authenticate = (authorization: string | null) => Principal | Promise<Principal>;

export interface AuthenticatorOptions {
  /** The verifier of `auth.jwt`; without it a JWT is just an unknown key. */
  verifyJwt?: VerifyJwt;
}

/**
 * Builds the authenticator from the configured keys and, optionally, the JWT verifier.
 * @example
 * const authenticate = createAuthenticator([{ key: "sk-local", app: "demo", developer: "me" }]);
 * authenticate("Bearer sk-local"); // { app: "demo", developer: "me", scheme: "api_key", admin: false }
 */
export function createAuthenticator(keys: readonly ApiKeyEntry[], options: AuthenticatorOptions = {}): Authenticate {
  const byDigest = new Map<string, { digest: Buffer; principal: Principal }>();
  for (const entry of keys) {
    const d = digest(entry.key);
    byDigest.set(d, { digest: Buffer.from(d, "base64"), principal: { app: entry.app, developer: entry.developer, scheme: "api_key", admin: entry.admin === true } });
  }
  const { verifyJwt } = options;
  return function authenticate(authorization) {
    const match = authorization ? BEARER.exec(authorization) : null;
    if (!match) throw invalidApiKey();
    const presented = digest(match[1]!);
    const found = byDigest.get(presented);
    if (found && timingSafeEqual(found.digest, Buffer.from(presented, "base64"))) return found.principal;
    if (verifyJwt && looksLikeJwt(match[1]!)) return authenticateJwt(verifyJwt, match[1]!);
    throw invalidApiKey();
  };
}

async function authenticateJwt(verifyJwt: VerifyJwt, token: string): Promise<Principal> {
  const { app, developer } = await verifyJwt(token);
  // Admin rights come from the router's own config only, never from an identity provider's claims.
  return { app, developer, scheme: "jwt", admin: false };
}

/**
 * The app whose stored completions a caller sees, and under which `store: true` keeps its own
 * (README, "Stored completions"): the principal's app, whichever way the caller proved itself, and
 * `default` without a principal (only paths that need no key have none). A key without `app` is in
 * `default` already.
 */
export function completionOwnerOf(principal: Principal | undefined): CompletionOwner {
  return principal?.app ?? "default";
}
