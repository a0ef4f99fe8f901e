/**
 * The fast path of Anthropic's stream translation (`stream.ts`): text and tool-argument deltas
 * recognised in the exact form Anthropic writes them, their string literal taken as it is, so that
 * nearly every event of a reply becomes a chunk without a parse.
 */

/**
 * A JSON string literal written as `JSON.stringify` writes one: no control character, and only the
 * two-character escapes it uses (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`). Such a literal is its
 * own re-serialisation, so it goes into a chunk as it is, unparsed. (The one other thing
 * `JSON.stringify` escapes, a lone surrogate, never comes out of decoding UTF-8.) A literal with any
 * other escape (`\u00e9`, `\/`) takes the full parse.
 */
export const CANONICAL_STRING = String.raw`"[^"\\\u0000-\u001f]*(?:\\["\\bfnrt][^"\\\u0000-\u001f]*)*"`;

/**
 * The string a `CANONICAL_STRING` literal stands for. A short one without escapes is its inside
 * (V8 copies a slice that short); any other is parsed, which makes a copy: a slice would keep the
 * whole upstream read it came in alive for as long as the text is (`store: true` keeps it until
 * the stream ends).
 */
export function decodeLiteral(literal: string): string {
  return literal.length < 15 && literal.indexOf("\\") < 0 ? literal.slice(1, -1) : (JSON.parse(literal) as string);
}

/**
 * Text and tool-argument deltas in the exact form Anthropic sends them: nearly every event of a
 * reply is one. The index is a JSON number (no leading zero), as the full parse would require.
 */
export const TEXT_DELTA = new RegExp(String.raw`^\{"type":"content_block_delta","index":(?:0|[1-9]\d*),"delta":\{"type":"text_delta","text":(${CANONICAL_STRING})\}\}$`);
export const ARGUMENTS_DELTA = new RegExp(
  String.raw`^\{"type":"content_block_delta","index":(0|[1-9]\d*),"delta":\{"type":"input_json_delta","partial_json":(${CANONICAL_STRING})\}\}$`,
);
