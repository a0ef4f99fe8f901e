/**
 * The headers of a provider's upstream requests (docs/plugins.md, "The provider kit"): its
 * credential, its fixed headers and the user's `headers` option, merged once at setup with
 * lower-cased names, so an entry of the option wins over a built-in header whatever its case
 * (a gateway that wants its own `authorization`). The records made here mask their credentials
 * when logged or serialised, and name them for `redactSecrets`.
 */
import { inspect } from "node:util";

/** What `upstreamHeaders` merges. */
export interface HeaderOptions {
  /** The configured API key; an empty one sends no credential (local servers need none). */
  apiKey?: string | undefined;
  /** How the key is sent: `"bearer"` for `Authorization: Bearer <key>`, or a header name (`x-api-key`). */
  auth?: "bearer" | (string & {});
  /** The provider's own headers (`anthropic-version`); an undefined value is left out. */
  fixed?: Readonly<Record<string, string | undefined>>;
  /** The user's `headers` option, last, so it wins. */
  extra?: Readonly<Record<string, string>> | undefined;
}

/** The merged headers, one record per kind of reply, and the credentials among them. */
export interface UpstreamHeaders {
  /** For a JSON reply: `content-type` and `accept: application/json`. */
  json: Readonly<Record<string, string>>;
  /** For an SSE reply: `accept: text/event-stream`. */
  stream: Readonly<Record<string, string>>;
  /** The credential values (the key, a configured credential header), for `redactSecrets`. */
  secrets: readonly string[];
}

/** Header names whose values are credentials: never logged, always redacted. */
const CREDENTIAL_NAME = /auth|key|token|secret|cookie|signature|password/i;

function masked(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) out[name] = CREDENTIAL_NAME.test(name) ? "[redacted]" : value;
  return out;
}

/**
 * The prototype of every record made here: `JSON.stringify` and `util.inspect` (so consola) show
 * credentials masked. Only own enumerable keys are sent, so the HTTP client never sees these.
 */
const MASKED_HEADERS: object = Object.create(Object.prototype, {
  toJSON: { value: function toJSON(this: Record<string, string>) { return masked(this); } },
  [inspect.custom]: { value: function inspectHeaders(this: Record<string, string>) { return masked(this); } },
});

/** A record with the masking prototype holding `sources` merged left to right. */
function headerRecord(...sources: Readonly<Record<string, string>>[]): Record<string, string> {
  return Object.assign(Object.create(MASKED_HEADERS) as Record<string, string>, ...sources);
}

/**
 * Merges a provider's headers once, at setup.
 * @example
 * const headers = upstreamHeaders({ apiKey: options.api_key, auth: "x-api-key", fixed: { "anthropic-version": "2023-06-01" }, extra: options.headers });
 * postUpstream(ctx, call, { url, headers: stream ? headers.stream : headers.json, body, toError });
 */
export function upstreamHeaders({ apiKey, auth = "bearer", fixed = {}, extra = {} }: HeaderOptions): UpstreamHeaders {
  const base: Record<string, string> = {};
  const secrets: string[] = [];
  if (apiKey) {
    base[auth === "bearer" ? "authorization" : auth.toLowerCase()] = auth === "bearer" ? `Bearer ${apiKey}` : apiKey;
    secrets.push(apiKey);
  }
  for (const [name, value] of Object.entries(fixed)) if (value !== undefined) base[name.toLowerCase()] = value;
  for (const [name, value] of Object.entries(extra)) {
    base[name.toLowerCase()] = value;
    // A gateway's own `authorization: Bearer …`: its token is the secret, not the scheme.
    if (CREDENTIAL_NAME.test(name) && value) secrets.push(value.replace(/^Bearer\s+/i, ""));
  }
  return {
    json: headerRecord({ "content-type": "application/json", accept: "application/json" }, base),
    stream: headerRecord({ "content-type": "application/json", accept: "text/event-stream" }, base),
    secrets,
  };
}

/**
 * `base` (a record of `upstreamHeaders`) with one per-call header added (its name in lower case),
 * still masked when logged: one record per call, as a spread would make.
 * @example
 * withCallHeader(headers.json, "x-client-request-id", call.requestId)
 */
export function withCallHeader(base: Readonly<Record<string, string>>, name: string, value: string): Record<string, string> {
  const headers = headerRecord(base);
  headers[name] = value;
  return headers;
}
