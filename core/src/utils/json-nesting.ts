/**
 * The nesting limit of request bodies (README, "Errors"). A body nested thousands of levels deep
 * parses, but everything that walks it afterwards by recursion (`JSON.stringify` on the way to a
 * provider, a schema walk) overflows the stack: it is refused before it is parsed.
 *
 * The check is a scan of the raw bytes that counts brackets outside strings: it allocates nothing,
 * costs a fraction of `JSON.parse` on the same body, and long strings are skipped with a native
 * search. Only when the limit is crossed is the body read a second time, to name the path.
 */
import { appendKey } from "../validation/error-path.ts";
import { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, COLON, COMMA, OPEN_ARRAY, OPEN_OBJECT, QUOTE } from "./json-chars.ts";

/**
 * The deepest nesting of objects and arrays a request body may have: the body itself is level 1.
 * A real body stays far below it: a tool's `parameters` at OpenAI's own limit for structured
 * outputs (10 levels of objects) sits about 25 levels deep.
 */
export const MAX_BODY_DEPTH = 64;

/**
 * The deepest nesting an upstream's JSON reply may have. A reply can carry a value as deep as the
 * request allowed (a tool call's arguments, shaped by its `parameters`) inside its own few levels,
 * so this is well above {@link MAX_BODY_DEPTH}, and still far within what serialising needs of
 * the stack.
 */
export const MAX_UPSTREAM_DEPTH = 256;

/** A string's first bytes are read here; past them the native search is cheaper than a JS loop. */
const SHORT_STRING = 48;

/**
 * The index of the quote that ends the string opened at `start`, or `bytes.length` when it never
 * ends. A quote preceded by an odd number of backslashes is escaped.
 */
function endOfString(bytes: Buffer, start: number): number {
  const n = bytes.length;
  const stop = Math.min(n, start + SHORT_STRING);
  let i = start + 1;
  for (; i < stop; i++) {
    const c = bytes[i];
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i;
  }
  if (i >= n) return n;
  for (;;) {
    const quote = bytes.indexOf(QUOTE, i);
    if (quote < 0) return n;
    let k = quote - 1;
    while (bytes[k] === BACKSLASH) k--;
    if ((quote - k) % 2 === 1) return quote;
    i = quote + 1;
  }
}

/**
 * The offset of the `{` or `[` that opens level `max + 1` of `bytes`, or -1 when the body stays
 * within `max` levels. Not a JSON validator: brackets inside strings are skipped, nothing else is
 * checked (`JSON.parse` does that next).
 */
export function findExcessNesting(bytes: Buffer, max = MAX_BODY_DEPTH): number {
  const n = bytes.length;
  let depth = 0;
  for (let i = 0; i < n; i++) {
    const c = bytes[i];
    if (c === QUOTE) i = endOfString(bytes, i);
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > max) return i;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth--;
  }
  return -1;
}

/** Whether `text` has more than `max` opening brackets in all, strings included: found by native searches. */
function hasMoreBracketsThan(text: string, max: number): boolean {
  let count = 0;
  for (let i = text.indexOf("{"); i >= 0; i = text.indexOf("{", i + 1)) if (++count > max) return true;
  for (let i = text.indexOf("["); i >= 0; i = text.indexOf("[", i + 1)) if (++count > max) return true;
  return false;
}

/**
 * {@link findExcessNesting} for JSON already decoded to a string (a request's string field, an
 * upstream's reply): the path where `text` opens level `max + 1`, as {@link nestingPath} names it,
 * or undefined when it stays within `max` levels. A text with at most `max` brackets in all cannot
 * nest deeper, so most texts are passed by a few native searches, without a copy; only one with
 * more brackets is scanned as bytes.
 * @example
 * findExcessNestingInText('{"a":[[1]]}', 2) // "a[0]"
 */
export function findExcessNestingInText(text: string, max = MAX_BODY_DEPTH): string | undefined {
  if (!hasMoreBracketsThan(text, max)) return undefined;
  const bytes = Buffer.from(text, "utf8");
  const excess = findExcessNesting(bytes, max);
  return excess < 0 ? undefined : nestingPath(bytes, excess);
}

/** One open container on the way to the excess: the key or index its current member has. */
interface Level {
  array: boolean;
  index: number;
  key: string;
  /** In an object, the next string is a key (after `{` or `,`), not a value. */
  expectsKey: boolean;
}

/** Keys longer than this are shown cut, with an ellipsis. */
const MAX_KEY_CHARS = 40;
/** A path longer than this is cut after the segment that crosses it, with an ellipsis. */
const MAX_PATH_CHARS = 120;

/** The key of the string between the quotes at `start` and `end`, decoded when short. */
function keyAt(bytes: Buffer, start: number, end: number): string {
  if (end - start - 1 <= MAX_KEY_CHARS * 4) {
    try {
      const key = JSON.parse(bytes.toString("utf8", start, end + 1)) as string;
      return key.length <= MAX_KEY_CHARS ? key : `${key.slice(0, MAX_KEY_CHARS)}…`;
    } catch {
      // An invalid escape: shown raw below.
    }
  }
  return `${bytes.toString("utf8", start + 1, Math.min(end, start + 1 + MAX_KEY_CHARS))}…`;
}

/**
 * The path, in the error envelope's `param` form, of the value that opens at `offset` (as found by
 * {@link findExcessNesting}): `tools[0].function.parameters.properties.a…`. Reads the body again up
 * to `offset`, keeping one entry per open level, so it is iterative and bounded by the limit.
 * A path longer than 120 characters keeps its head (where the value is in the request) and ends
 * with `…`.
 */
export function nestingPath(bytes: Buffer, offset: number): string {
  const levels: Level[] = [];
  for (let i = 0; i < offset; i++) {
    const c = bytes[i];
    const top = levels[levels.length - 1];
    if (c === QUOTE) {
      const end = endOfString(bytes, i);
      if (top && !top.array && top.expectsKey) top.key = keyAt(bytes, i, end);
      i = end;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) levels.push({ array: c === OPEN_ARRAY, index: 0, key: "", expectsKey: c === OPEN_OBJECT });
    else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) levels.pop();
    else if (top && c === COMMA) {
      if (top.array) top.index++;
      else top.expectsKey = true;
    } else if (top && c === COLON) top.expectsKey = false;
  }
  let path = "";
  for (const level of levels) {
    path = level.array ? `${path}[${level.index}]` : appendKey(path, level.key);
    if (path.length > MAX_PATH_CHARS) return `${path}…`;
  }
  return path;
}
