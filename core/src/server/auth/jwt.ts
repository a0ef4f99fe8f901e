/**
 * Identity-provider tokens (`auth.jwt`; docs/interface.md, "Authentication"): a Bearer JWT is
 * verified with `jose` against the provider's JWKS (signature, `iss`, `aud`, `exp`, `nbf`), and its
 * claims name the app and the developer that rate limits count. The JWKS is fetched once and
 * cached; a token signed with a key the cache does not have (a rotation) fetches it again, at most
 * once per `jwks_cooldown`. Every failure is a 401; a slow identity provider costs at most
 * `jwks_timeout`. Tokens are never logged.
 */
import type { ConsolaInstance } from "consola";
import type { JWTPayload } from "jose";
import { invalidApiKey, type ModelmuxError } from "../../errors.ts";

/** jose is imported only when `auth.jwt` is configured: a router without JWTs never loads it. */
type Jose = typeof import("jose");

export interface JwtSettings {
  issuer: string;
  audience: string | string[];
  jwksUrl: URL;
  /** Default `azp`. */
  appClaim: string;
  /** Default `sub`. */
  developerClaim: string;
  /** Undefined: whatever asymmetric algorithm the JWKS key is for. */
  algorithms?: string[];
  clockToleranceS: number;
  jwksTimeoutMs: number;
  jwksCooldownMs: number;
  jwksCacheMaxAgeMs: number;
}

/** The scope a verified token gives. */
export interface JwtIdentity {
  app: string;
  developer: string;
}

export type VerifyJwt = (token: string) => Promise<JwtIdentity>;

/** Compact JWS: three base64url parts, the header a JSON object (`eyJ` is `{"`). */
const JWT_SHAPE = /^eyJ[\w-]*\.[\w-]+\.[\w-]+$/;

/** True when a Bearer value has the shape of a signed JWT (it is not verified). */
export function looksLikeJwt(value: string): boolean {
  return JWT_SHAPE.test(value);
}

/** Claim values become scope names; a scope name is a short string. */
const MAX_SCOPE_LENGTH = 256;

function rejected(reason: string): ModelmuxError {
  return invalidApiKey(`Invalid API key: the Bearer token is a JWT that failed verification: ${reason}.`);
}

/** Why a token failed, in words a client can act on; never the token itself. */
function reasonOf(error: unknown, { errors }: Jose): { reason: string; idpDown: boolean } {
  if (error instanceof errors.JWTExpired) return { reason: "it has expired (exp)", idpDown: false };
  if (error instanceof errors.JWTClaimValidationFailed) {
    const { claim, reason } = error;
    if (claim === "nbf") return { reason: "it is not valid yet (nbf)", idpDown: false };
    if (claim === "iss") return { reason: "it was issued by another issuer (iss)", idpDown: false };
    if (claim === "aud") return { reason: "it is for another audience (aud)", idpDown: false };
    if (reason === "missing") return { reason: `it has no '${claim}' claim`, idpDown: false };
    return { reason: `its '${claim}' claim is invalid`, idpDown: false };
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return { reason: "its signature does not verify", idpDown: false };
  if (error instanceof errors.JWKSNoMatchingKey) return { reason: "it is signed with a key the identity provider does not list (kid)", idpDown: false };
  if (error instanceof errors.JOSEAlgNotAllowed) return { reason: "it is signed with an algorithm that is not allowed", idpDown: false };
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid || error instanceof errors.JOSENotSupported) {
    return { reason: "it is malformed or of an unsupported kind", idpDown: false };
  }
  if (error instanceof errors.JWKSTimeout) return { reason: "the identity provider's keys (JWKS) could not be fetched in time", idpDown: true };
  // Anything else comes from fetching or reading the JWKS: refused, not 200, not a key set.
  return { reason: "the identity provider's keys (JWKS) could not be fetched", idpDown: true };
}

function scopeName(payload: JWTPayload, claim: string, scope: "app" | "developer"): string {
  const value = payload[claim];
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  if (typeof value !== "string" || value === "") throw rejected(`it has no '${claim}' claim to name its ${scope} (auth.jwt.${scope}_claim)`);
  if (value.length > MAX_SCOPE_LENGTH) throw rejected(`its '${claim}' claim is longer than ${MAX_SCOPE_LENGTH} characters`);
  return value;
}

/**
 * Builds the verifier of `auth.jwt`. The JWKS is fetched in the background at once, so a wrong
 * `jwks_url` shows in the log at start; a failure there is not fatal (the next token retries).
 * @example
 * const verify = createJwtVerifier(settings, logger);
 * const { app, developer } = await verify(token); // or throws the 401 envelope's error
 */
export function createJwtVerifier(settings: JwtSettings, logger: ConsolaInstance): VerifyJwt {
  // The URL's host only: a JWKS URL may carry a credential in its query.
  const idp = settings.jwksUrl.host;
  let idpDown = false;
  const reportIdp = (down: boolean, reason: string) => {
    if (down && !idpDown) logger.warn(`identity provider at ${idp}: ${reason}; tokens are refused until it answers`);
    if (!down && idpDown) logger.info(`identity provider at ${idp}: tokens verify again`);
    idpDown = down;
  };
  const loaded = import("jose").then((jose) => {
    const jwks = jose.createRemoteJWKSet(settings.jwksUrl, {
      timeoutDuration: settings.jwksTimeoutMs,
      cooldownDuration: settings.jwksCooldownMs,
      cacheMaxAge: settings.jwksCacheMaxAgeMs,
    });
    jwks.reload().then(
      () => reportIdp(false, ""),
      (error: unknown) => reportIdp(true, reasonOf(error, jose).reason),
    );
    return { jose, jwks };
  });
  const options = {
    issuer: settings.issuer,
    audience: settings.audience,
    clockTolerance: settings.clockToleranceS,
    requiredClaims: ["exp"],
    ...(settings.algorithms && { algorithms: settings.algorithms }),
  };
  return async function verifyJwt(token) {
    const { jose, jwks } = await loaded;
    let payload: JWTPayload;
    try {
      ({ payload } = await jose.jwtVerify(token, jwks, options));
    } catch (error) {
      const { reason, idpDown: down } = reasonOf(error, jose);
      reportIdp(down, reason);
      throw rejected(reason);
    }
    if (idpDown) reportIdp(false, "");
    return { app: scopeName(payload, settings.appClaim, "app"), developer: scopeName(payload, settings.developerClaim, "developer") };
  };
}
