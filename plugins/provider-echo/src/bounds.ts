/**
 * What one echo reply may cost (README, "Bounds"). The echo model makes its reply out of the
 * request (its text, `n`, a tool's `parameters`, a `json_schema`), so a small request could ask for
 * a huge reply: `minItems: 10000000` once made a 60 MB one. These bounds keep every reply small and
 * quick to make, whatever is asked. A request that asks for more gets less: a cut text finishes with
 * `length` (`incomplete` on the Responses API); a schema example may then break its schema.
 */

/** Characters (code points) of text in one choice: 4,096 tokens by the echo's count. */
export const MAX_TEXT_CHARS = 16_384;

/** Characters of all the choices of one reply together: with a large `n`, each gets its share. */
export const MAX_REPLY_CHARS = 131_072;

/** Streamed pieces (content or tool-argument chunks) of one reply, all choices together. */
export const MAX_STREAM_PIECES = 1_024;

/** Items of an array in a schema example, whatever its `minItems`. */
export const MAX_EXAMPLE_ITEMS = 8;

/** Properties of an object in a schema example: the first of its `required`. */
export const MAX_EXAMPLE_PROPERTIES = 100;

/** Levels of a schema example; a deeper schema (a recursive `$ref`) ends there with `null`. */
export const MAX_EXAMPLE_DEPTH = 16;

/**
 * The characters one choice may carry (its text, its tool call's arguments, its JSON example) when
 * the reply has `n` choices.
 * @example choiceChars(1) // 16384; choiceChars(128) // 1024
 */
export function choiceChars(n: number): number {
  return Math.min(MAX_TEXT_CHARS, Math.floor(MAX_REPLY_CHARS / Math.max(1, n)));
}

/**
 * How many characters each streamed piece has: `chunkSize`, or more when the text would otherwise
 * take more than its share of `MAX_STREAM_PIECES` (with `choices` choices streamed).
 */
export function pieceSize(chars: number, chunkSize: number, choices: number): number {
  const pieces = Math.max(1, Math.floor(MAX_STREAM_PIECES / Math.max(1, choices)));
  return Math.max(chunkSize, Math.ceil(chars / pieces));
}

/** Responses the Responses API keeps in memory (for retrieve, `previous_response_id` and the like). */
export const MAX_KEPT_RESPONSES = 1_000;

/** Characters of request bodies the kept responses may hold in all: the oldest go first past it. */
export const MAX_KEPT_CHARS = 32 * 1024 * 1024;
