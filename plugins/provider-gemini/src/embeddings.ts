/**
 * OpenAI's embeddings request -> Gemini's `embedContent` (one text) and `batchEmbedContents`
 * (several, at most 100 a call), and their replies -> OpenAI's embeddings result (docs/plugins.md,
 * "Embeddings"). Pure. Gemini embeds text only, so token ids are refused; `dimensions` is
 * `outputDimensionality`. The Gemini API reports no token usage for embeddings: the result has a
 * usage only when every vector carries its `statistics.tokenCount` (Vertex's form).
 */
import { embeddingInputs, invalidRequest, upstreamError, type EmbeddingsRequest, type EmbeddingsResponse } from "@modelmux/core";

/** Google's bound on the requests of one `batchEmbedContents` call. */
export const EMBED_BATCH_LIMIT = 100;

/** One `embedContent` body, and one item of a batch's `requests` (which also names its model). */
export interface GeminiEmbedRequest {
  model?: string;
  content: { parts: Array<{ text: string }> };
  outputDimensionality?: number;
}

/** One vector as read from a reply, with its token count when the reply gave one. */
export interface GeminiEmbedding {
  values: unknown;
  tokenCount?: number;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The texts to embed, in order.
 * @throws 400 `unsupported_feature` for token ids: Gemini takes text only.
 */
export function embeddingTexts(request: EmbeddingsRequest, provider: string): string[] {
  return embeddingInputs(request.input).map((input) => {
    if (typeof input === "string") return input;
    throw invalidRequest(`input: provider '${provider}' is Gemini, which embeds text only: send the inputs as strings, not token ids.`, { code: "unsupported_feature", param: "input" });
  });
}

/**
 * One text's request; with `model` (`models/<id>`, or a tuned model's full name), an item of a batch.
 * @example toEmbedRequest("hello", 256) // { content: { parts: [{ text: "hello" }] }, outputDimensionality: 256 }
 */
export function toEmbedRequest(text: string, dimensions: number | null | undefined, model?: string): GeminiEmbedRequest {
  const request: GeminiEmbedRequest = { content: { parts: [{ text }] } };
  if (model !== undefined) request.model = model;
  if (dimensions != null) request.outputDimensionality = dimensions;
  return request;
}

function readEmbedding(raw: unknown, provider: string, where: string): GeminiEmbedding {
  if (!isObject(raw) || !Array.isArray(raw.values)) throw upstreamError(`${provider}: the embedding reply has no '${where}.values'.`);
  const embedding: GeminiEmbedding = { values: raw.values };
  const tokens = isObject(raw.statistics) ? raw.statistics.tokenCount : undefined;
  if (typeof tokens === "number" && Number.isFinite(tokens) && tokens >= 0) embedding.tokenCount = tokens;
  return embedding;
}

/** An `embedContent` reply, `{embedding: {values}}`; anything else is a 502. */
export function readEmbedContent(reply: unknown, provider: string): GeminiEmbedding {
  return readEmbedding(isObject(reply) ? reply.embedding : undefined, provider, "embedding");
}

/** A `batchEmbedContents` reply, `{embeddings: [{values}]}`, with one vector per request sent; anything else is a 502. */
export function readBatchEmbedContents(reply: unknown, provider: string, count: number): GeminiEmbedding[] {
  const embeddings = isObject(reply) ? reply.embeddings : undefined;
  if (!Array.isArray(embeddings)) throw upstreamError(`${provider}: the batch embedding reply has no 'embeddings' list.`);
  if (embeddings.length !== count) throw upstreamError(`${provider}: the batch embedding reply has ${embeddings.length} embeddings for ${count} texts.`);
  return embeddings.map((raw, i) => readEmbedding(raw, provider, `embeddings[${i}]`));
}

/** The vectors, in input order, as OpenAI's result. */
export function toEmbeddingsResponse(embeddings: readonly GeminiEmbedding[], model: string): EmbeddingsResponse {
  const reply: EmbeddingsResponse = {
    object: "list",
    data: embeddings.map(({ values }, index) => ({ object: "embedding", index, embedding: values as number[] })),
    model,
  };
  if (embeddings.every((embedding) => embedding.tokenCount !== undefined)) {
    const tokens = embeddings.reduce((sum, embedding) => sum + embedding.tokenCount!, 0);
    reply.usage = { prompt_tokens: tokens, total_tokens: tokens };
  }
  return reply;
}
