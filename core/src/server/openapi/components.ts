/**
 * The reusable parts of the OpenAPI document's operations (docs/interface.md, "OpenAPI
 * description"): the error replies by status, the reply headers, the parameters and the security
 * schemes, with the helpers `paths.ts` writes its operations with.
 */
import type { JsonSchema } from "../../plugin.ts";
import { schemaRef } from "./reply-schemas.ts";

export type OpenApiObject = { [key: string]: unknown };

/** `#/components/<kind>/<name>`. */
export function ref(kind: "schemas" | "responses" | "parameters" | "headers", name: string): OpenApiObject {
  return { $ref: `#/components/${kind}/${name}` };
}

// Security ------------------------------------------------------------------------------------

/** docs/interface.md, "Authentication": both are the Bearer value of `Authorization`. */
export const SECURITY_SCHEMES: OpenApiObject = {
  api_key: { type: "http", scheme: "bearer", description: "An API key of `auth.api_keys`." },
  identity_token: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "With `auth.jwt`: a token of the identity provider, verified against its key set. Not on `/v1/responses`.",
  },
};

/** Either scheme: the `/v1/` endpoints but the Responses API. */
export const KEY_OR_TOKEN = [{ api_key: [] }, { identity_token: [] }];
/** `/v1/responses` and its sub-paths take API keys only. */
export const KEY_ONLY = [{ api_key: [] }];
/** The admin endpoints: an API key with `admin: true` (docs/interface.md, "Authentication"); a token is never one. */
export const ADMIN_KEY = [{ api_key: [] }];
/** `/healthz`, `/openapi.json` and image URLs need no credential. */
export const PUBLIC: never[] = [];

// Headers -------------------------------------------------------------------------------------

const header = (description: string, schema: JsonSchema = { type: "string" }): OpenApiObject => ({ description, schema });

export const HEADERS: OpenApiObject = {
  RequestId: header("The request's id: the client's own `x-request-id` when short and plain, else a new UUID."),
  Allow: header("The methods the path serves."),
  WwwAuthenticate: header('`Bearer realm="modelmux"`.'),
  RetryAfter: header("Seconds to wait, rounded up.", { type: "integer", minimum: 0 }),
  RetryAfterMs: header("Milliseconds to wait.", { type: "integer", minimum: 0 }),
  Attempts: header("The number of upstream calls made for the request.", { type: "integer", minimum: 0 }),
  AnsweredBy: header("The `provider/model` that answered."),
  RateLimitLimitRequests: header("With rate limits: the rule with the least left, its limit.", { type: "integer" }),
  RateLimitRemainingRequests: header("With rate limits: requests left.", { type: "integer" }),
  RateLimitResetRequests: header("With rate limits: when it fills up again, e.g. `6m0s`."),
  RateLimitLimitTokens: header("With a token limit: its limit.", { type: "integer" }),
  RateLimitRemainingTokens: header("With a token limit: tokens left.", { type: "integer" }),
  RateLimitResetTokens: header("With a token limit: when it fills up again."),
  RateLimitLimitCost: header("With a budget: its limit in USD, a plain decimal, e.g. `50`."),
  RateLimitRemainingCost: header("With a budget: USD left, this request's reservation deducted, e.g. `12.3456`."),
  RateLimitResetCost: header("With a budget: when its oldest spending leaves the window, e.g. `719h59m0s`."),
};

const REQUEST_ID = { "x-request-id": ref("headers", "RequestId") };

/** The `x-ratelimit-*` headers of a rate-limited endpoint's replies (docs/interface.md, "Rate limits"). */
const RATE_LIMIT_HEADERS = {
  "x-ratelimit-limit-requests": ref("headers", "RateLimitLimitRequests"),
  "x-ratelimit-remaining-requests": ref("headers", "RateLimitRemainingRequests"),
  "x-ratelimit-reset-requests": ref("headers", "RateLimitResetRequests"),
  "x-ratelimit-limit-tokens": ref("headers", "RateLimitLimitTokens"),
  "x-ratelimit-remaining-tokens": ref("headers", "RateLimitRemainingTokens"),
  "x-ratelimit-reset-tokens": ref("headers", "RateLimitResetTokens"),
  "x-ratelimit-limit-cost": ref("headers", "RateLimitLimitCost"),
  "x-ratelimit-remaining-cost": ref("headers", "RateLimitRemainingCost"),
  "x-ratelimit-reset-cost": ref("headers", "RateLimitResetCost"),
};

/** The headers of a reply that went through the routing (docs/interface.md, "Routing and resilience"). */
export const ROUTED_HEADERS = {
  ...REQUEST_ID,
  "x-modelmux-attempts": ref("headers", "Attempts"),
  "x-modelmux-model": ref("headers", "AnsweredBy"),
  ...RATE_LIMIT_HEADERS,
};

// Replies -------------------------------------------------------------------------------------

/** A 2xx reply with a JSON body. */
export function jsonReply(description: string, schema: string, headers: OpenApiObject = REQUEST_ID): OpenApiObject {
  return { description, headers, content: { "application/json": { schema: schemaRef(schema) } } };
}

/** A 2xx reply with a text body (`text/plain`, its own content type given in full). */
export function textReply(description: string, schema: string, mediaType = "text/plain"): OpenApiObject {
  return { description, headers: REQUEST_ID, content: { [mediaType]: { schema: schemaRef(schema) } } };
}

function errorReply(description: string, headers: OpenApiObject = {}): OpenApiObject {
  return { description, headers: { ...REQUEST_ID, ...headers }, content: { "application/json": { schema: schemaRef("ErrorEnvelope") } } };
}

/** The error replies by status (docs/interface.md, "Errors"), each in the envelope. */
const ERRORS_BY_STATUS: Record<string, [name: string, reply: OpenApiObject]> = {
  "400": ["BadRequest", errorReply("The body, query or path fails its rules (`invalid_value`, `missing_field`, `unknown_field`, `invalid_json`, `nesting_too_deep`, `unsupported_feature`, `invalid_request`).")],
  "401": ["Unauthorized", errorReply("No credential, an unknown one, or a token that fails (`invalid_api_key`).", { "www-authenticate": ref("headers", "WwwAuthenticate") })],
  "403": ["Forbidden", errorReply("An admin endpoint called with a key that is not an admin key (`permission_error`, `admin_required`).")],
  "404": ["NotFound", errorReply("An unknown model (`model_not_found`), route, or object (`not_found`), or a feature that is off.")],
  "405": ["MethodNotAllowed", errorReply("A method the path does not serve (`method_not_allowed`).", { allow: ref("headers", "Allow") })],
  "413": ["PayloadTooLarge", errorReply("A body over `server.body_limit` (`body_too_large`).")],
  "415": ["UnsupportedMediaType", errorReply("A body that is not declared JSON (`unsupported_media_type`).")],
  "429": [
    "RateLimited",
    errorReply("A rate limit of the router or the provider (`rate_limit_exceeded`).", {
      "retry-after": ref("headers", "RetryAfter"),
      "retry-after-ms": ref("headers", "RetryAfterMs"),
      ...RATE_LIMIT_HEADERS,
    }),
  ],
  "500": ["InternalError", errorReply("The storage failed (`storage_error`), or a bug (`internal_error`).")],
  "502": ["BadGateway", errorReply("The provider failed, broke off or sent something unreadable (`upstream_error`).")],
  "503": ["NotReady", errorReply("A plugin's backend does not answer (`not_ready`): the message names each and why.")],
  "504": ["GatewayTimeout", errorReply("The provider did not answer in time (`upstream_timeout`).")],
  default: ["Error", errorReply("Any other error: a provider's own 4xx keeps its status; 408, 417 and 431 come from the server in front of the routes.")],
};

/** `components.responses`: every error reply, by name. */
export const ERROR_REPLIES: OpenApiObject = Object.fromEntries(Object.values(ERRORS_BY_STATUS));

/**
 * The error replies of an operation, by status, as `$ref`s; `default` (any other status) is always
 * there: a provider's own 4xx keeps its status.
 * @example errorReplies(400, 401, 404)
 */
export function errorReplies(...statuses: number[]): OpenApiObject {
  const replies: OpenApiObject = {};
  for (const status of [...statuses.map(String), "default"]) replies[status] = ref("responses", ERRORS_BY_STATUS[status]![0]);
  return replies;
}

// Parameters ----------------------------------------------------------------------------------

const inPath = (name: string, description: string, schema: JsonSchema = { type: "string", minLength: 1 }): OpenApiObject => ({
  name,
  in: "path",
  required: true,
  description,
  schema,
});
const inQuery = (name: string, description: string, schema: JsonSchema): OpenApiObject => ({ name, in: "query", description, schema });

/** `components.parameters`. The list queries are `core/src/stored/list-query.ts`'s. */
export const PARAMETERS: OpenApiObject = {
  CompletionId: inPath("completion_id", "The id of a stored chat completion."),
  ResponseId: inPath("response_id", "The id of a response, as the provider gave it."),
  ModelName: inPath(
    "model",
    "A name the models list shows: `provider/model` (its `/` percent-encoded, `%2F`, as the SDKs send it; the router also takes it as is, `/v1/models/openai/gpt-4o`), an alias or a pool.",
  ),
  After: inQuery("after", "The last id of the previous page.", { type: "string", minLength: 1 }),
  Limit: inQuery("limit", "The page size.", { type: "integer", minimum: 0, maximum: 100, default: 20 }),
  Order: inQuery("order", "By creation time.", { type: "string", enum: ["asc", "desc"], default: "asc" }),
  ModelFilter: inQuery("model", "Only completions of this model: the routed `provider/model` or the `model` the stored object shows.", { type: "string" }),
  MetadataFilter: {
    name: "metadata",
    in: "query",
    style: "deepObject",
    explode: true,
    description: "`metadata[key]=value`: only completions whose metadata has each pair.",
    schema: { type: "object", additionalProperties: { type: "string" } },
  },
  UsageStart: inQuery("start", "The first UTC day, inclusive. Default: `end`.", { type: "string", format: "date" }),
  UsageEnd: inQuery("end", "The last UTC day, inclusive; at most 366 days after `start`. Default: today.", { type: "string", format: "date" }),
  UsageGroupBy: inQuery("group_by", "A comma-separated list of `app`, `developer`, `model`, `provider`: a row per interval and each combination. Default: none, totals per interval.", {
    type: "string",
    pattern: "^((app|developer|model|provider)(,(app|developer|model|provider))*)?$",
  }),
  UsageInterval: inQuery("interval", "A row per UTC `day`, per UTC `hour`, or one for the whole range (`total`).", { type: "string", enum: ["day", "hour", "total"], default: "day" }),
  ResponseStream: inQuery("stream", "`true` resumes a background response's events as a stream. The whole query string is forwarded.", { type: "boolean" }),
};

/** The parameter names as `$ref`s. */
export function params(...names: string[]): OpenApiObject[] {
  return names.map((name) => ref("parameters", name));
}
