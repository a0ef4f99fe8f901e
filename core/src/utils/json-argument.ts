/**
 * JSON that a request carries inside a string field (an assistant message's tool call
 * `arguments`, a tool message's content), parsed by a provider that must send it as a value. The
 * body's nesting limit (README, "Errors") cannot see into a string, so the same limit is checked
 * here, with the same scan, before the text is parsed: a value nested thousands of levels deep
 * parses, but serialising it for the upstream overflows the stack.
 */
import { invalidRequest } from "../errors.ts";
import { findExcessNestingInText, MAX_BODY_DEPTH } from "./json-nesting.ts";

/** How {@link parseJsonArgument} treats text nested past the limit. */
export interface JsonArgumentOptions {
  /**
   * Read JSON nested past the limit as text that is not JSON (`undefined`) instead of refusing it:
   * for a field whose text is as good as its value, like a tool's result that a provider wraps as
   * text when it is not a JSON object.
   */
  deepAsText?: boolean;
}

/**
 * Parses the JSON text of a request's string field, with the nesting limit of request bodies
 * (64 levels; the text's own value is level 1).
 * @param param the field's path in the envelope's `param` form, named by the 400
 * @returns the parsed value, or `undefined` when the text is not JSON (the caller decides what that means)
 * @throws 400 `nesting_too_deep` naming `param`, when the value nests objects and arrays deeper than the limit (unless `deepAsText`)
 * @example
 * const input = parseJsonArgument(call.function.arguments, `messages[${i}].tool_calls[${j}].function.arguments`);
 * if (typeof input !== "object" || input === null) throw invalidRequest(…);
 */
export function parseJsonArgument(text: string, param: string, options?: JsonArgumentOptions): unknown {
  const excess = findExcessNestingInText(text);
  if (excess !== undefined) {
    if (options?.deepAsText) return undefined;
    const rule = `JSON in a string field may nest objects and arrays at most ${MAX_BODY_DEPTH} levels deep, as a request body may`;
    throw invalidRequest(`${param}: the JSON in this string is nested too deeply (at ${excess}); ${rule}.`, { code: "nesting_too_deep", param });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
