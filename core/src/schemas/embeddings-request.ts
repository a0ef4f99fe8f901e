/**
 * The body of `POST /v1/embeddings` (docs/interface.md, "Embeddings"): OpenAI's fields and no
 * others. Unknown fields are rejected, as on chat and images: the body is translated for providers
 * that are not OpenAI, where a field the core does not know would be dropped silently.
 */
import type { JsonSchema } from "../plugin.ts";
import { nullableEnum, nullableString } from "./common.ts";

/** The most inputs one request embeds: OpenAI's bound. */
export const MAX_EMBEDDING_INPUTS = 2048;

/** The most token ids in one input given as tokens: above any embedding model's context. */
export const MAX_EMBEDDING_INPUT_TOKENS = 65_536;

/** How the vectors come back: numbers, or base64 of little-endian float32 (OpenAI's two forms). */
export type EmbeddingEncoding = "float" | "base64";

export interface EmbeddingsRequest {
  model: string;
  /** One text, several texts, one input as token ids, or several inputs as token ids. */
  input: string | string[] | number[] | number[][];
  /** The length of each vector, for models that can shorten theirs. */
  dimensions?: number | null;
  /** Default `float`. */
  encoding_format?: EmbeddingEncoding | null;
  user?: string | null;
}

const tokenId: JsonSchema = { type: "integer", minimum: 0, maximum: 2_147_483_647 };
const tokenList: JsonSchema = { type: "array", minItems: 1, maxItems: MAX_EMBEDDING_INPUT_TOKENS, items: tokenId };

// One `type` with if/then per array form, not `anyOf`: the error then names the item that breaks
// the form the array took (`input[2]: must be a string`), not "must match one of the allowed forms".
const input: JsonSchema = {
  type: ["string", "array"],
  // Each keyword applies to its own type only: strings must not be empty, arrays neither.
  minLength: 1,
  minItems: 1,
  if: { type: "array", contains: { type: "string" } },
  then: { maxItems: MAX_EMBEDDING_INPUTS, items: { type: "string", minLength: 1 } },
  else: {
    if: { type: "array", contains: { type: "array" } },
    then: { maxItems: MAX_EMBEDDING_INPUTS, items: tokenList },
    // A string, or an array of token ids (these keywords pass strings by).
    else: { maxItems: MAX_EMBEDDING_INPUT_TOKENS, items: tokenId },
  },
};

export const embeddingsRequestSchema: JsonSchema = {
  type: "object",
  required: ["model", "input"],
  additionalProperties: false,
  properties: {
    model: { type: "string" },
    input,
    dimensions: { type: ["integer", "null"], minimum: 1, maximum: 2_147_483_647 },
    encoding_format: nullableEnum(["float", "base64"]),
    user: nullableString,
  },
};

/** The request's inputs, one per vector the reply must have. */
export function embeddingInputs(input: EmbeddingsRequest["input"]): ReadonlyArray<string | readonly number[]> {
  if (typeof input === "string") return [input];
  const first = input[0];
  return typeof first === "number" ? [input as number[]] : (input as Array<string | number[]>);
}
