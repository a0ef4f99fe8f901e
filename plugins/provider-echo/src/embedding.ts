/**
 * Echo embeddings (README, "Embeddings"): a vector made from the text alone, so the same text
 * always gets the same vector and texts that share words get vectors near each other. Each word,
 * and each three-character piece of it, adds ±1 (pieces ±½) at a place picked by its hash (the
 * "hashing trick"); the sum is scaled to length 1. No model, no network: a test double for code that
 * stores and compares vectors.
 */
import { embeddingInputs, providerError, type EmbeddingsRequest, type EmbeddingsResponse } from "@modelmux/core";
import { MAX_TEXT_CHARS } from "./bounds.ts";
import { cutChars } from "./chars.ts";
import { countTokens } from "./tokens.ts";

/** The vector length without `dimensions`. */
export const ECHO_DIMENSIONS = 256;

/** The longest vector `dimensions` may ask for. */
export const MAX_ECHO_DIMENSIONS = 4096;

/** Numbers in one reply (inputs × dimensions): 2,048 vectors of 512, or fewer longer ones. */
export const MAX_ECHO_VALUES = 1_048_576;

const WORD_SEPARATORS = /[^\p{L}\p{N}]+/u;

/** 32-bit FNV-1a of the UTF-16 code units. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * The echo vector of `text`: length `dimensions`, L2 norm 1, its numbers float32 values (so the
 * numbers and the base64 form are the same vector). Only the first 16,384 characters count.
 * @example echoVector("the cat sat", 4) // four numbers whose squares add up to 1
 */
export function echoVector(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  const add = (feature: string, weight: number) => {
    const h = hash(feature);
    vector[h % dimensions]! += h & 0x80000000 ? -weight : weight;
  };
  const lower = cutChars(text, MAX_TEXT_CHARS).toLowerCase();
  const words = lower.split(WORD_SEPARATORS).filter(Boolean);
  // Text without letters or digits ("?!") is its own one "word".
  for (const word of words.length > 0 ? words : [lower]) {
    add(`w:${word}`, 1);
    const padded = ` ${word} `;
    for (let i = 0; i + 3 <= padded.length; i++) add(padded.slice(i, i + 3), 0.5);
  }
  let norm = 0;
  for (const value of vector) norm += value * value;
  if (norm === 0) {
    // Every feature cancelled out: still a unit vector, and still the same one for this text.
    vector[hash(lower) % dimensions] = 1;
    return vector;
  }
  const scale = 1 / Math.sqrt(norm);
  return vector.map((value) => Math.fround(value * scale));
}

/**
 * The echo's reply to an embeddings request. Token ids are embedded as the text of the ids joined by
 * spaces; usage counts text as chat does (a token per 4 characters) and token ids one each.
 * @param name the provider's name, for errors
 */
export function echoEmbeddings(request: EmbeddingsRequest, name: string): EmbeddingsResponse {
  const dimensions = request.dimensions ?? ECHO_DIMENSIONS;
  if (dimensions > MAX_ECHO_DIMENSIONS) {
    throw providerError(name, { status: 400, message: `dimensions: the echo model makes vectors of at most ${MAX_ECHO_DIMENSIONS} dimensions.`, code: "invalid_value", param: "dimensions" });
  }
  const inputs = embeddingInputs(request.input);
  if (inputs.length * dimensions > MAX_ECHO_VALUES) {
    const most = Math.floor(MAX_ECHO_VALUES / dimensions);
    throw providerError(name, { status: 400, message: `input: the echo model embeds at most ${most} inputs of ${dimensions} dimensions in one request.`, code: "invalid_value", param: "input" });
  }
  let tokens = 0;
  const data = inputs.map((input, index) => {
    const text = typeof input === "string" ? input : input.join(" ");
    tokens += typeof input === "string" ? countTokens(input) : input.length;
    return { object: "embedding" as const, index, embedding: echoVector(text, dimensions) };
  });
  return { object: "list", data, model: request.model, usage: { prompt_tokens: tokens, total_tokens: tokens } };
}
