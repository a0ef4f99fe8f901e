/**
 * An OpenAI embeddings reply (`POST /embeddings`) -> the interface's embeddings result, read
 * defensively, for every OpenAI-shaped provider (docs/plugins.md, "The provider kit"). Only the
 * shape is read here; the core checks the vectors themselves (one per input, numbers or base64).
 */
import { upstreamError } from "../../errors.ts";
import type { Embedding, EmbeddingsResponse } from "../../types/embeddings.ts";
import { parseUpstreamJson } from "../../upstream/send.ts";

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Parses a 200 reply; one without a `data` array is the upstream failing (502).
 * @param model the bare model id, for a reply that names none
 */
export function parseEmbeddingsText(text: string, provider: string, model: string): EmbeddingsResponse {
  const body = parseUpstreamJson(text, provider);
  if (!isObject(body) || !Array.isArray(body.data)) throw upstreamError(`${provider}: the embeddings reply has no 'data' array.`);
  const data = body.data.map((raw, position): Embedding => {
    const item = isObject(raw) ? raw : {};
    return { object: "embedding", index: typeof item.index === "number" ? item.index : position, embedding: item.embedding as Embedding["embedding"] };
  });
  const reply: EmbeddingsResponse = { object: "list", data, model: typeof body.model === "string" ? body.model : model };
  if (isObject(body.usage)) reply.usage = body.usage as unknown as EmbeddingsResponse["usage"];
  return reply;
}
