/**
 * Credentials out of any text an upstream sends back (docs/plugins.md, "The provider kit"): an
 * error message is logged at debug level and sent to the client, and upstreams echo keys in them
 * (OpenAI a masked `sk-proj-****abcd` on a 401, Google a request URL with `key=`, a proxy the
 * whole `Authorization` header).
 */

const REDACTED = "[redacted]";

/**
 * What looks like a credential whatever the provider: OpenAI- and Anthropic-style `sk-` keys,
 * Google's `AIza…` keys, a bearer token, and a masked key (`abc****wxyz`), which still holds part
 * of the key.
 */
const KEY_SHAPES = /\bsk-[A-Za-z0-9_*-]{4,}|AIza[0-9A-Za-z_-]{8,}|[A-Za-z0-9_-]*\*{3,}[A-Za-z0-9_-]*/g;
const BEARER = /\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi;
/** A `key=` query parameter of a URL the upstream echoes. */
const KEY_PARAM = /([?&]key=)[^&\s"']+/g;

/**
 * `text` without `secrets` (the configured key and credential headers; empty ones skipped) and
 * without anything shaped like a key or a bearer token.
 * @example
 * redactSecrets("Incorrect API key provided: sk-proj-****abcd", [options.api_key])
 * // "Incorrect API key provided: [redacted]"
 */
export function redactSecrets(text: string, secrets: readonly (string | undefined)[] = []): string {
  let out = text;
  for (const secret of secrets) if (secret) out = out.split(secret).join(REDACTED);
  return out.replace(KEY_SHAPES, REDACTED).replace(BEARER, `$1${REDACTED}`).replace(KEY_PARAM, `$1${REDACTED}`);
}
