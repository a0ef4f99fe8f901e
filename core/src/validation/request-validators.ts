/**
 * The validators of the request bodies, compiled once when the router starts.
 */
import type { Ajv } from "ajv";
import { invalidRequest } from "../errors.ts";
import { chatRequestRules, chatRequestSchema } from "../schemas/chat-request.ts";
import { embeddingsRequestSchema, type EmbeddingsRequest } from "../schemas/embeddings-request.ts";
import { imagesRequestSchema, type ImageGenerationRequest } from "../schemas/images-request.ts";
import { metadataUpdateSchema, type MetadataUpdate } from "../schemas/metadata-update.ts";
import { responsesRequestSchema, type ResponsesRequest } from "../schemas/responses-request.ts";
import type { ChatRequest } from "../types/chat.ts";
import { compileValidator, createAjv } from "./ajv.ts";

/** One function per request body: returns the body typed, or throws a 400 `ModelmuxError`. */
export interface RequestValidators {
  chat(body: unknown): ChatRequest;
  responses(body: unknown): ResponsesRequest;
  images(body: unknown): ImageGenerationRequest;
  embeddings(body: unknown): EmbeddingsRequest;
  metadataUpdate(body: unknown): MetadataUpdate;
}

/**
 * Compiles the request schemas once.
 * @param ajv The instance to compile into; a new one from `createAjv()` by default.
 * @example
 * const validators = createRequestValidators();
 * const request = validators.chat(await readBody(event)); // 400 envelope error when invalid
 */
export function createRequestValidators(ajv: Ajv = createAjv()): RequestValidators {
  const chat = compileValidator<ChatRequest>(ajv, chatRequestSchema, { rules: chatRequestRules });
  const responses = compileValidator<ResponsesRequest>(ajv, responsesRequestSchema);
  const images = compileValidator<ImageGenerationRequest>(ajv, imagesRequestSchema);
  const embeddings = compileValidator<EmbeddingsRequest>(ajv, embeddingsRequestSchema);
  const metadataUpdate = compileValidator<MetadataUpdate>(ajv, metadataUpdateSchema);
  return {
    chat: (body) => chat(requireObject(body)),
    responses: (body) => responses(requireObject(body)),
    images: (body) => images(requireObject(body)),
    embeddings: (body) => embeddings(requireObject(body)),
    metadataUpdate: (body) => metadataUpdate(requireObject(body)),
  };
}

// Checked before the schema so that `[]`, `"text"` or `null` get one clear message, not "must be an object".
function requireObject(body: unknown): unknown {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw invalidRequest("Request body must be a JSON object", { code: "invalid_value", param: null });
  }
  return body;
}
