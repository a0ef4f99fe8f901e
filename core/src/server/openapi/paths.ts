/**
 * The OpenAPI document's `paths`: every route of `core/src/server/routes.ts`, each method with its
 * parameters, request body, replies and security (docs/interface.md, "Endpoints"). A `GET` route
 * that answers `HEAD` has a `head` operation too, the same replies without their bodies.
 */
import { IMAGE_EXTENSIONS, IMAGE_FILES_PATH } from "../../images/image-store.ts";
import { chatRequestRules } from "../../schemas/chat-request.ts";
import {
  ADMIN_KEY,
  ERROR_REPLIES,
  KEY_ONLY,
  KEY_OR_TOKEN,
  PUBLIC,
  ROUTED_HEADERS,
  errorReplies,
  jsonReply,
  params,
  ref,
  textReply,
  type OpenApiObject,
} from "./components.ts";
import { schemaRef } from "./reply-schemas.ts";

export interface Operation extends OpenApiObject {
  operationId: string;
  summary: string;
  responses: Record<string, OpenApiObject>;
}

export type PathItem = Record<string, Operation | OpenApiObject[]>;

function body(schema: string, description?: string): OpenApiObject {
  return { required: true, ...(description && { description }), content: { "application/json": { schema: schemaRef(schema) } } };
}

/** A 200 that is JSON, or Server-Sent Events with `stream: true`: each event's data is `event`. */
function jsonOrStream(description: string, json: string, event: string): OpenApiObject {
  return {
    description: `${description} With \`stream: true\`, Server-Sent Events: each \`data:\` is one ${event}.`,
    headers: ROUTED_HEADERS,
    content: { "application/json": { schema: schemaRef(json) }, "text/event-stream": { schema: schemaRef(event) } },
  };
}

/** The replies of a `HEAD`: the `GET`'s statuses and headers, without a body. */
function headOf(get: Operation): Operation {
  const responses: Record<string, OpenApiObject> = {};
  for (const [status, reply] of Object.entries(get.responses)) {
    const named = typeof reply.$ref === "string" ? (ERROR_REPLIES[reply.$ref.split("/").pop()!] as OpenApiObject) : reply;
    responses[status] = { description: named.description, ...(named.headers !== undefined && { headers: named.headers }) };
  }
  return { ...get, operationId: `${get.operationId}Head`, summary: `${get.summary} (headers only)`, responses };
}

/** `get` and `head`, as `routes.ts` serves every GET but the Responses API's. */
function getAndHead(get: Operation): PathItem {
  return { get, head: headOf(get) };
}

const crossFieldRules = chatRequestRules.map((rule) => `\`${rule.param}\` ${rule.message}`).join("; ");

const chat: PathItem = {
  post: {
    operationId: "createChatCompletion",
    summary: "Create a chat completion, JSON or streamed",
    tags: ["chat"],
    security: KEY_OR_TOKEN,
    requestBody: body("CreateChatCompletionRequest", `Checked against its schema, then: ${crossFieldRules}.`),
    responses: {
      "200": jsonOrStream("The completion.", "ChatCompletion", "ChatCompletionStreamEvent"),
      ...errorReplies(400, 401, 404, 413, 415, 429, 500, 502, 504),
    },
  },
  ...getAndHead({
    operationId: "listChatCompletions",
    summary: "List the caller's app's stored chat completions, a page at a time",
    tags: ["stored completions"],
    security: KEY_OR_TOKEN,
    parameters: params("After", "Limit", "Order", "ModelFilter", "MetadataFilter"),
    responses: { "200": jsonReply("A page.", "StoredChatCompletionList"), ...errorReplies(400, 401, 404, 500) },
  }),
};

const storedCompletion: PathItem = {
  parameters: params("CompletionId"),
  ...getAndHead({
    operationId: "getChatCompletion",
    summary: "Get a stored chat completion, with its metadata",
    tags: ["stored completions"],
    security: KEY_OR_TOKEN,
    responses: { "200": jsonReply("The completion.", "StoredChatCompletion"), ...errorReplies(400, 401, 404, 500) },
  }),
  post: {
    operationId: "updateChatCompletion",
    summary: "Replace a stored chat completion's metadata",
    tags: ["stored completions"],
    security: KEY_OR_TOKEN,
    requestBody: body("UpdateChatCompletionRequest", "`metadata: null` clears it."),
    responses: { "200": jsonReply("The completion, with its new metadata.", "StoredChatCompletion"), ...errorReplies(400, 401, 404, 413, 415, 500) },
  },
  delete: {
    operationId: "deleteChatCompletion",
    summary: "Delete a stored chat completion",
    tags: ["stored completions"],
    security: KEY_OR_TOKEN,
    responses: { "200": jsonReply("Deleted.", "StoredChatCompletionDeleted"), ...errorReplies(400, 401, 404, 500) },
  },
};

const storedMessages: PathItem = {
  parameters: params("CompletionId"),
  ...getAndHead({
    operationId: "listChatCompletionMessages",
    summary: "List a stored chat completion's request messages, a page at a time",
    tags: ["stored completions"],
    security: KEY_OR_TOKEN,
    parameters: params("After", "Limit", "Order"),
    responses: { "200": jsonReply("A page.", "StoredChatCompletionMessageList"), ...errorReplies(400, 401, 404, 500) },
  }),
};

/** The replies of a call forwarded to the responses provider: its own errors come back in the envelope too. */
const FORWARDED_ERRORS = errorReplies(400, 401, 404, 429, 500, 502, 504);

const responses: PathItem = {
  post: {
    operationId: "createResponse",
    summary: "Create a response: the Responses API, forwarded to `responses.provider`",
    tags: ["responses"],
    security: KEY_ONLY,
    requestBody: body("CreateResponseRequest", "Fields the schema does not list are forwarded unchecked."),
    responses: { "200": jsonOrStream("The provider's response.", "Response", "ResponseStreamEvent"), ...errorReplies(400, 401, 404, 413, 415, 429, 500, 502, 504) },
  },
};

const forwarded = (operationId: string, summary: string, reply: OpenApiObject, extra: OpenApiObject = {}): Operation => ({
  operationId,
  summary,
  tags: ["responses"],
  security: KEY_ONLY,
  ...extra,
  responses: { "200": reply, ...FORWARDED_ERRORS },
});

const response: PathItem = {
  parameters: params("ResponseId"),
  get: forwarded(
    "getResponse",
    "Get a response (poll a background one), forwarded",
    { ...jsonOrStream("The provider's response.", "Response", "ResponseStreamEvent"), description: "The provider's response; with `stream=true`, its events." },
    { parameters: params("ResponseStream") },
  ),
  delete: forwarded("deleteResponse", "Delete a response, forwarded", jsonReply("The provider's reply.", "ResponseForwarded", ROUTED_HEADERS)),
};

const imageName = {
  name: "name",
  in: "path",
  required: true,
  description: "`<token>.<ext>`: an image is served under its own type's extension only.",
  schema: { type: "string", pattern: `^[A-Za-z0-9_-]{32}\\.(${Object.values(IMAGE_EXTENSIONS).join("|")})$` },
};

const imageFile: PathItem = {
  parameters: [imageName],
  ...getAndHead({
    operationId: "getImageFile",
    summary: "A generated image kept for `response_format: url`, for 60 minutes",
    tags: ["images"],
    security: PUBLIC,
    responses: {
      "200": { description: "The image, as its own type only.", headers: { "x-request-id": ref("headers", "RequestId") }, content: Object.fromEntries(Object.keys(IMAGE_EXTENSIONS).map((type) => [type, {}])) },
      ...errorReplies(400, 404, 500),
    },
  }),
};

/** A public `GET` (and `HEAD`) with a JSON reply. */
const publicJson = (operationId: string, summary: string, schema: string): PathItem =>
  getAndHead({ operationId, summary, tags: ["service"], security: PUBLIC, responses: { "200": jsonReply(summary, schema), ...errorReplies() } });

export const PATHS: Readonly<Record<string, PathItem>> = {
  "/v1/chat/completions": chat,
  "/v1/chat/completions/{completion_id}": storedCompletion,
  "/v1/chat/completions/{completion_id}/messages": storedMessages,
  "/v1/responses": responses,
  "/v1/responses/{response_id}": response,
  "/v1/responses/{response_id}/cancel": {
    parameters: params("ResponseId"),
    post: forwarded("cancelResponse", "Cancel a background response, forwarded (no body)", jsonReply("The provider's response.", "Response", ROUTED_HEADERS)),
  },
  "/v1/responses/{response_id}/input_items": {
    parameters: params("ResponseId"),
    get: forwarded("listResponseInputItems", "List a response's input items, forwarded with the query string", jsonReply("The provider's list.", "ResponseForwarded", ROUTED_HEADERS)),
  },
  "/v1/images/generations": {
    post: {
      operationId: "createImage",
      summary: "Generate images",
      tags: ["images"],
      security: KEY_OR_TOKEN,
      requestBody: body("CreateImageRequest"),
      responses: { "200": jsonReply("The images.", "ImagesResponse", ROUTED_HEADERS), ...errorReplies(400, 401, 404, 413, 415, 429, 500, 502, 504) },
    },
  },
  [`${IMAGE_FILES_PATH}/{name}`]: imageFile,
  "/v1/embeddings": {
    post: {
      operationId: "createEmbedding",
      summary: "Embed texts (or token ids) as vectors",
      tags: ["embeddings"],
      security: KEY_OR_TOKEN,
      requestBody: body("CreateEmbeddingRequest"),
      responses: { "200": jsonReply("One vector per input.", "EmbeddingsResponse", ROUTED_HEADERS), ...errorReplies(400, 401, 404, 413, 415, 429, 500, 502, 504) },
    },
  },
  "/v1/models": getAndHead({
    operationId: "listModels",
    summary: "List every served model, alias and pool",
    tags: ["models"],
    security: KEY_OR_TOKEN,
    responses: { "200": jsonReply("Every configured model whose provider is on, then the aliases and pools of those models, each marked by `modelmux_kind`.", "ModelList"), ...errorReplies(401) },
  }),
  "/v1/usage": getAndHead({
    operationId: "getUsage",
    summary: "Usage counters: requests, errors, tokens and cost per day or hour, app, developer and model; admin keys only",
    tags: ["admin"],
    security: ADMIN_KEY,
    parameters: params("UsageStart", "UsageEnd", "UsageGroupBy", "UsageInterval"),
    responses: { "200": jsonReply("The counters of the range, every router sharing the storage included.", "UsageList"), ...errorReplies(400, 401, 403, 500) },
  }),
  "/v1/models/{model}": {
    parameters: params("ModelName"),
    ...getAndHead({
      operationId: "retrieveModel",
      summary: "One entry of the models list: a model, an alias or a pool",
      tags: ["models"],
      security: KEY_OR_TOKEN,
      responses: { "200": jsonReply("The entry, as the list shows it.", "Model"), ...errorReplies(400, 401, 404) },
    }),
  },
  "/healthz": publicJson("getHealth", "The router serves.", "Health"),
  "/readyz": getAndHead({
    operationId: "getReadiness",
    summary: "Every plugin is set up and its backend answers",
    tags: ["service"],
    security: PUBLIC,
    responses: { "200": jsonReply("Ready: each checked plugin, by its config section.", "Readiness"), ...errorReplies(503) },
  }),
  "/openapi.json": publicJson("getOpenApiDocument", "This document.", "OpenApiDocument"),
  "/metrics": getAndHead({
    operationId: "getMetrics",
    summary: "The router's metrics, for Prometheus; admin keys only",
    tags: ["admin"],
    security: ADMIN_KEY,
    responses: {
      "200": textReply("Prometheus text (`text/plain; version=0.0.4; charset=utf-8`), never cached.", "MetricsText"),
      ...errorReplies(401, 403),
    },
  }),
  "/ui": getAndHead({
    operationId: "getStatusPage",
    summary: "The status page: HTML that asks for an admin key and shows the figures of `/ui/status.json`",
    tags: ["operations"],
    security: PUBLIC,
    responses: {
      "200": {
        description: "The page, its style and script inline; its content security policy allows only them and requests to the router.",
        headers: { "x-request-id": ref("headers", "RequestId"), "content-security-policy": { description: "The page's own script and style, by hash.", schema: { type: "string" } } },
        content: { "text/html": {} },
      },
      ...errorReplies(),
    },
  }),
  "/ui/status.json": getAndHead({
    operationId: "getStatus",
    summary: "The status page's figures: this router's last hour and day, its targets' circuits, the rate limits",
    description: "An admin key only (`admin: true`): another valid key is 403 `admin_required`.",
    tags: ["operations"],
    security: ADMIN_KEY,
    responses: { "200": jsonReply("The figures, true now (`cache-control: no-store`).", "Status"), ...errorReplies(401, 403) },
  }),
};
