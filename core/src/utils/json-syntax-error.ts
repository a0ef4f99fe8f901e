/**
 * Where a body stops being JSON, for the 400 `invalid_json` message (README, "Errors"). V8's own
 * `JSON.parse` messages quote a piece of the input, which the router never sends back; this reads
 * the text once more (only after `JSON.parse` failed) and says what was expected where, in words
 * of its own. Iterative, so no body can overflow the stack.
 */

/** Where the text stops being JSON and why. */
export interface JsonSyntaxError {
  /** 0-based index into the text (UTF-16 code units, as `JSON.parse` counts). */
  offset: number;
  /** 1-based line and column of `offset`. */
  line: number;
  column: number;
  /** What was expected there, e.g. `expected ',' or '}'`. */
  reason: string;
}

/** What the grammar allows next. */
const Expect = { Value: 0, ValueOrEnd: 1, Key: 2, KeyOrEnd: 3, Colon: 4, After: 5 } as const;
type Expect = (typeof Expect)[keyof typeof Expect];

/** The characters after a backslash that make an escape (`\u` apart). */
const ESCAPES = new Set(Array.from('"\\/bfnrt', (char) => char.charCodeAt(0)));

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/** A failure at `offset`, thrown inside this module only. */
class Failure {
  constructor(
    readonly offset: number,
    readonly reason: string,
  ) {}
}

/** The index after the string that opens at `start`. */
function skipString(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) return i + 1;
    if (c < 0x20) throw new Failure(i, "a control character in a string must be escaped");
    if (c !== 0x5c) continue;
    const next = text.charCodeAt(i + 1);
    if (next === 0x75) {
      for (let k = i + 2; k < i + 6; k++) if (!isHex(text.charCodeAt(k))) throw new Failure(i, "invalid \\u escape in a string (it takes 4 hex digits)");
      i += 5;
    } else if (ESCAPES.has(next)) i++;
    else throw new Failure(i, "invalid escape in a string");
  }
  throw new Failure(text.length, "unterminated string");
}

/** The index after the number that starts at `start`. */
function skipNumber(text: string, start: number): number {
  let i = start;
  if (text.charCodeAt(i) === 0x2d) i++;
  if (text.charCodeAt(i) === 0x30) i++;
  else if (isDigit(text.charCodeAt(i))) while (isDigit(text.charCodeAt(i))) i++;
  else throw new Failure(i, "invalid number");
  if (text.charCodeAt(i) === 0x2e) {
    if (!isDigit(text.charCodeAt(++i))) throw new Failure(i, "invalid number: a digit must follow the decimal point");
    while (isDigit(text.charCodeAt(i))) i++;
  }
  if (text.charCodeAt(i) === 0x65 || text.charCodeAt(i) === 0x45) {
    i++;
    if (text.charCodeAt(i) === 0x2b || text.charCodeAt(i) === 0x2d) i++;
    if (!isDigit(text.charCodeAt(i))) throw new Failure(i, "invalid number: a digit must follow the exponent");
    while (isDigit(text.charCodeAt(i))) i++;
  }
  return i;
}

/** Walks the grammar; throws a `Failure` at the first place it breaks. */
function check(text: string): void {
  const stack: boolean[] = []; // true: an array
  let expect: Expect = Expect.Value;
  let i = 0;
  for (;;) {
    while (i < text.length && isSpace(text.charCodeAt(i))) i++;
    if (i >= text.length) {
      if (expect === Expect.After && stack.length === 0) return;
      throw new Failure(i, text.trim() === "" ? "the body has no JSON value" : "the body ends before the JSON value is complete");
    }
    const c = text.charCodeAt(i);
    switch (expect) {
      case Expect.Value:
      case Expect.ValueOrEnd:
        if (c === 0x5d && expect === Expect.ValueOrEnd) {
          stack.pop();
          expect = Expect.After;
          i++;
        } else if (c === 0x7b || c === 0x5b) {
          stack.push(c === 0x5b);
          expect = c === 0x5b ? Expect.ValueOrEnd : Expect.KeyOrEnd;
          i++;
        } else if (c === 0x22) {
          i = skipString(text, i);
          expect = Expect.After;
        } else if (c === 0x2d || isDigit(c)) {
          i = skipNumber(text, i);
          expect = Expect.After;
        } else {
          const literal = ["true", "false", "null"].find((word) => text.startsWith(word, i));
          if (!literal) throw new Failure(i, expect === Expect.ValueOrEnd ? "expected a value or ']'" : "expected a value");
          i += literal.length;
          expect = Expect.After;
        }
        break;
      case Expect.Key:
      case Expect.KeyOrEnd:
        if (c === 0x7d && expect === Expect.KeyOrEnd) {
          stack.pop();
          expect = Expect.After;
          i++;
        } else if (c === 0x22) {
          i = skipString(text, i);
          expect = Expect.Colon;
        } else throw new Failure(i, expect === Expect.KeyOrEnd ? "expected a property name in double quotes or '}'" : "expected a property name in double quotes");
        break;
      case Expect.Colon:
        if (c !== 0x3a) throw new Failure(i, "expected ':' after a property name");
        expect = Expect.Value;
        i++;
        break;
      case Expect.After: {
        if (stack.length === 0) throw new Failure(i, "unexpected text after the JSON value");
        const array = stack[stack.length - 1];
        if (c === 0x2c) expect = array ? Expect.Value : Expect.Key;
        else if (c === (array ? 0x5d : 0x7d)) {
          stack.pop();
          expect = Expect.After;
        } else throw new Failure(i, array ? "expected ',' or ']'" : "expected ',' or '}'");
        i++;
        break;
      }
    }
  }
}

/**
 * Where `text` stops being JSON, or `undefined` when it is JSON after all.
 * @example findJsonSyntaxError('{"a": 1,\n}') // { offset: 9, line: 2, column: 1, reason: "expected a property name in double quotes" }
 */
export function findJsonSyntaxError(text: string): JsonSyntaxError | undefined {
  try {
    check(text);
    return undefined;
  } catch (error) {
    if (!(error instanceof Failure)) throw error;
    let line = 1;
    let lineStart = 0;
    for (let at = text.indexOf("\n"); at >= 0 && at < error.offset; at = text.indexOf("\n", at + 1)) {
      line++;
      lineStart = at + 1;
    }
    return { offset: error.offset, line, column: error.offset - lineStart + 1, reason: error.reason };
  }
}
