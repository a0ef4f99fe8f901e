/**
 * The echo model's token count. Real tokenizers are large and model-specific; this rule is one a
 * person can apply by hand when writing a test: one token per 4 characters, rounded up, counted in
 * Unicode code points so that an emoji is one character and is never split in half.
 */

/** Characters per token (OpenAI's rule of thumb for English text). */
export const CHARS_PER_TOKEN = 4;

/**
 * The number of tokens in `text`: `ceil(code points / 4)`.
 * @example countTokens("hello world") // 3 (11 characters)
 */
export function countTokens(text: string): number {
  return Math.ceil(Array.from(text).length / CHARS_PER_TOKEN);
}

/** The longest prefix of `text` that is at most `maxTokens` tokens long. */
export function truncateToTokens(text: string, maxTokens: number): string {
  const chars = Array.from(text);
  const limit = Math.max(0, maxTokens) * CHARS_PER_TOKEN;
  return chars.length <= limit ? text : chars.slice(0, limit).join("");
}
