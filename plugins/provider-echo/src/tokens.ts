/**
 * The echo model's token count. Real tokenizers are large and model-specific; this rule is one a
 * person can apply by hand when writing a test: one token per 4 characters, rounded up, counted in
 * Unicode code points so that an emoji is one character and is never split in half.
 */
import { countChars, cutChars } from "./chars.ts";

/** Characters per token (OpenAI's rule of thumb for English text). */
export const CHARS_PER_TOKEN = 4;

/**
 * The number of tokens in `text`: `ceil(code points / 4)`.
 * @example countTokens("hello world") // 3 (11 characters)
 */
export function countTokens(text: string): number {
  return Math.ceil(countChars(text) / CHARS_PER_TOKEN);
}

/** The longest prefix of `text` that is at most `maxTokens` tokens long. */
export function truncateToTokens(text: string, maxTokens: number): string {
  return cutChars(text, Math.max(0, maxTokens) * CHARS_PER_TOKEN);
}
