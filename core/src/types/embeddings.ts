/**
 * The embeddings reply (docs/interface.md, "Embeddings"): OpenAI's `list` of `embedding` objects.
 */

/** One input's vector: numbers, or base64 of its little-endian float32 values. */
export interface Embedding {
  object: "embedding";
  /** The position of its input in the request. */
  index: number;
  embedding: number[] | string;
}

/** Embedding models read and write nothing else: `total_tokens` is `prompt_tokens`. */
export interface EmbeddingsUsage {
  prompt_tokens: number;
  total_tokens: number;
}

export interface EmbeddingsResponse {
  object: "list";
  data: Embedding[];
  /** The model that answered, as its provider names it. */
  model: string;
  /** Absent when the provider reported none: never made up. */
  usage?: EmbeddingsUsage;
}
