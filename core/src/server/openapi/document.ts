/**
 * The router's interface as an OpenAPI 3.1 document, served at `GET /openapi.json`
 * (docs/interface.md, "OpenAPI description"). The request bodies' schemas are the very objects the
 * router validates with (`core/src/schemas/`), not copies; the replies' are `reply-schemas.ts`.
 * The document depends on no config, so it is made once, on first use, and served as text.
 */
import { chatRequestSchema } from "../../schemas/chat-request.ts";
import { embeddingsRequestSchema } from "../../schemas/embeddings-request.ts";
import { imagesRequestSchema } from "../../schemas/images-request.ts";
import { metadataUpdateSchema } from "../../schemas/metadata-update.ts";
import { responsesRequestSchema } from "../../schemas/responses-request.ts";
import { ERROR_REPLIES, HEADERS, KEY_OR_TOKEN, PARAMETERS, SECURITY_SCHEMES, type OpenApiObject } from "./components.ts";
import { PATHS } from "./paths.ts";
import { REPLY_SCHEMAS } from "./reply-schemas.ts";
import { STATUS_SCHEMAS } from "./status-schemas.ts";

/** The version of the interface the document describes (docs/interface.md, "OpenAPI description"), not the package's. */
export const INTERFACE_VERSION = "0.1.0";

/** The request bodies' schemas, by their name under `components.schemas`. */
export const REQUEST_SCHEMAS = {
  CreateChatCompletionRequest: chatRequestSchema,
  UpdateChatCompletionRequest: metadataUpdateSchema,
  CreateResponseRequest: responsesRequestSchema,
  CreateImageRequest: imagesRequestSchema,
  CreateEmbeddingRequest: embeddingsRequestSchema,
};

const DESCRIPTION = [
  "modelmux: one OpenAI-compatible API in front of many model providers.",
  "Every error reply is the envelope `ErrorEnvelope`. A path not listed here is 404, and a method a path does not list is 405 (`#/components/responses/MethodNotAllowed`).",
  "Streams are Server-Sent Events: the schema given for `text/event-stream` is that of one event's `data:`.",
].join("\n\n");

/**
 * Builds the document. Its parts are this module's constants, shared: read it, never change it.
 * @example const doc = buildOpenApiDocument(); doc.info.version // "0.1.0"
 */
export function buildOpenApiDocument() {
  return {
    openapi: "3.1.0",
    info: { title: "modelmux", version: INTERFACE_VERSION, description: DESCRIPTION },
    // Either scheme, unless an operation says otherwise (docs/interface.md, "Authentication").
    security: KEY_OR_TOKEN,
    tags: [
      { name: "chat", description: "Chat completions." },
      { name: "stored completions", description: "Chat completions made with `store: true`, per app." },
      { name: "responses", description: "The Responses API, forwarded to one provider; API keys only." },
      { name: "images", description: "Image generation, and the image URLs the router serves." },
      { name: "embeddings", description: "Vectors of texts." },
      { name: "models", description: "The served models." },
      { name: "service", description: "The router itself; no credential." },
      { name: "admin", description: "The router's operation: an API key with `admin: true` only." },
      { name: "operations", description: "The status page: the page is public, its figures need an admin key." },
    ],
    paths: PATHS,
    components: {
      schemas: { ...REQUEST_SCHEMAS, ...REPLY_SCHEMAS, ...STATUS_SCHEMAS },
      responses: ERROR_REPLIES,
      parameters: PARAMETERS,
      headers: HEADERS,
      securitySchemes: SECURITY_SCHEMES,
    },
  } satisfies OpenApiObject;
}

let text: string | undefined;

/** The document's JSON text, made once. */
export function openApiJson(): string {
  return (text ??= JSON.stringify(buildOpenApiDocument()));
}
