/**
 * The two reads of a raw JSON body besides `JSON.parse`: the nesting scan (and the path it names
 * when the limit is crossed), and the locator of a syntax error. Both must agree with `JSON.parse`
 * on what a string or a bracket is, and neither may recurse.
 */
import { describe, expect, test } from "vitest";
import { ModelmuxError } from "../src/errors.ts";
import { parseJsonArgument } from "../src/utils/json-argument.ts";
import { findExcessNesting, findExcessNestingInText, MAX_BODY_DEPTH, nestingPath } from "../src/utils/json-nesting.ts";
import { findJsonSyntaxError } from "../src/utils/json-syntax-error.ts";

/** `{"type":"object","properties":{"a": … {} … }}` with `levels` levels of objects in all. */
function deepSchema(levels: number): string {
  const pairs = Math.floor((levels - 1) / 2);
  const middle = (levels - 1) % 2 === 1 ? '{"type":"object","properties":{}}' : "{}";
  return '{"type":"object","properties":{"a":'.repeat(pairs) + middle + "}}".repeat(pairs);
}

/** The greatest nesting of a parsed value, walked without recursion. */
function depthOf(value: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== "object") continue;
    max = Math.max(max, depth);
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return max;
}

describe("findExcessNesting", () => {
  test("passes a body of exactly the limit, refuses one level more at the bracket that crosses it", () => {
    const atLimit = Buffer.from(deepSchema(MAX_BODY_DEPTH));
    expect(depthOf(JSON.parse(atLimit.toString()))).toBe(MAX_BODY_DEPTH);
    expect(findExcessNesting(atLimit)).toBe(-1);
    const over = Buffer.from(deepSchema(MAX_BODY_DEPTH + 1));
    expect(depthOf(JSON.parse(over.toString()))).toBe(MAX_BODY_DEPTH + 1);
    const at = findExcessNesting(over);
    expect(over[at]).toBe("{".charCodeAt(0));
  });

  test("skips brackets inside strings, escaped quotes and backslashes included, short and long", () => {
    for (const filler of ["[[[{{{", '\\"[[[[', "\\\\", "x".repeat(100) + '\\"' + "[".repeat(200), "é😀[".repeat(50)]) {
      const body = Buffer.from(JSON.stringify({ a: [filler.repeat(30), { b: filler }], [filler]: 1 }));
      expect(findExcessNesting(body, 3)).toBe(-1);
    }
    const body = Buffer.from(`{"s": "\\\\", "t": ${"[".repeat(10)}${"]".repeat(10)}}`);
    expect(findExcessNesting(body, 10)).toBe(body.indexOf("[") + 9);
  });

  test("a million unclosed brackets stop the scan at the first one past the limit", () => {
    const body = Buffer.from("[".repeat(1_000_000));
    expect(findExcessNesting(body)).toBe(MAX_BODY_DEPTH);
    expect(nestingPath(body, MAX_BODY_DEPTH).startsWith("[0][0][0]")).toBe(true);
  });
});

describe("findExcessNestingInText", () => {
  test("agrees with the byte scan and names the path; few brackets are passed without a scan", () => {
    expect(findExcessNestingInText('{"a":[[1]]}', 2)).toBe("a[0]");
    expect(findExcessNestingInText('{"a":[[1]]}', 3)).toBeUndefined();
    expect(findExcessNestingInText(deepSchema(MAX_BODY_DEPTH))).toBeUndefined();
    expect(findExcessNestingInText(deepSchema(MAX_BODY_DEPTH + 1))).toMatch(/^properties\.a\.properties\.a/);
    // Brackets inside strings count toward the quick test but not toward the depth; multi-byte text too.
    expect(findExcessNestingInText(JSON.stringify({ "é😀": "[".repeat(500), b: ["{".repeat(500)] }))).toBeUndefined();
    expect(findExcessNestingInText(`{"é😀":${"[".repeat(100)}${"]".repeat(100)}}`)).toMatch(/^\["é😀"\]\[0\]\[0\]/);
  });
});

describe("nestingPath", () => {
  test("names keys and indices of the way down, in the param form, cut after 120 characters", () => {
    const body = Buffer.from(`{"tools":[{"type":"function"},{"function":{"parameters":${deepSchema(80)}}}]}`);
    const path = nestingPath(body, findExcessNesting(body));
    expect(path).toMatch(/^tools\[1\]\.function\.parameters\.properties\.a\.properties\.a/);
    expect(path.endsWith("…")).toBe(true);
    expect(path.length).toBeLessThan(200);
  });

  test("counts array members and quotes odd keys", () => {
    const deep = "[".repeat(10) + "]".repeat(10);
    const body = Buffer.from(`{"a b": [1, "x,y", {"k": 0}, {"c\\"d": ${deep}}]}`);
    expect(nestingPath(body, findExcessNesting(body, 8))).toBe('["a b"][3]["c\\"d"][0][0][0][0][0]');
  });

  test("a very long key is shown cut", () => {
    const key = "k".repeat(10_000);
    const body = Buffer.from(`{"${key}": ${"[".repeat(5)}${"]".repeat(5)}}`);
    const path = nestingPath(body, findExcessNesting(body, 3));
    expect(path.length).toBeLessThan(200);
    expect(path.startsWith(`["${"k".repeat(40)}…"]`)).toBe(true);
  });
});

describe("parseJsonArgument", () => {
  const param = "messages[1].tool_calls[0].function.arguments";

  test("parses JSON text up to the limit; text that is not JSON is undefined", () => {
    const atLimit = deepSchema(MAX_BODY_DEPTH);
    expect(depthOf(parseJsonArgument(atLimit, param))).toBe(MAX_BODY_DEPTH);
    expect(parseJsonArgument('{"city":"Paris"}', param)).toEqual({ city: "Paris" });
    expect(parseJsonArgument("[1]", param)).toEqual([1]);
    for (const text of ["", "{broken", "plain text", "[".repeat(10)]) expect(parseJsonArgument(text, param)).toBeUndefined();
  });

  test("past the limit: 400 nesting_too_deep naming the field, and where in its text", () => {
    for (const text of [deepSchema(MAX_BODY_DEPTH + 1), `{"a":${"[".repeat(100_000)}${"]".repeat(100_000)}}`, "[".repeat(1_000_000)]) {
      let error: unknown;
      try {
        parseJsonArgument(text, param);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ModelmuxError);
      expect(error).toMatchObject({ status: 400, code: "nesting_too_deep", param });
      const message = (error as Error).message;
      expect(message.startsWith(`${param}: `)).toBe(true);
      expect(message).toContain(`${MAX_BODY_DEPTH} levels`);
      expect(message.length).toBeLessThan(400);
    }
  });

  test("brackets inside the text's strings do not count; deepAsText reads deep JSON as not JSON", () => {
    const text = JSON.stringify({ a: "[".repeat(1000), b: "{".repeat(1000) });
    expect(parseJsonArgument(text, param)).toEqual(JSON.parse(text));
    expect(parseJsonArgument("[".repeat(100) + "]".repeat(100), param, { deepAsText: true })).toBeUndefined();
    expect(parseJsonArgument('{"a":1}', param, { deepAsText: true })).toEqual({ a: 1 });
  });
});

describe("findJsonSyntaxError", () => {
  test.each([
    ['{"a": secret}', 1, 7, "expected a value"],
    ['{"model": "m",', 1, 15, "the body ends before the JSON value is complete"],
    ['{"a": 1}}', 1, 9, "unexpected text after the JSON value"],
    ['{\n  "a": 1,\n}', 3, 1, "expected a property name in double quotes"],
    ['{"a" 1}', 1, 6, "expected ':' after a property name"],
    ["[1 2]", 1, 4, "expected ',' or ']'"],
    ['{"a": "x\u0001"}', 1, 9, "a control character in a string must be escaped"],
    ['{"a": "\\x"}', 1, 8, "invalid escape in a string"],
    ['{"a": 01}', 1, 8, "expected ',' or '}'"],
    ['{"a": 1.}', 1, 9, "invalid number: a digit must follow the decimal point"],
    ['"abc', 1, 5, "unterminated string"],
    ["", 1, 1, "the body has no JSON value"],
  ])("%j: line %i, column %i, %s", (text, line, column, reason) => {
    expect(() => JSON.parse(text)).toThrow();
    expect(findJsonSyntaxError(text)).toMatchObject({ line, column, reason });
  });

  test("agrees with JSON.parse on every one-character change of a valid body", () => {
    const valid = JSON.stringify({ a: [1, -2.5e3, true, false, null, "x\"y\\z\n\u00e9😀"], "b c": { d: {} }, e: [] }, null, 1);
    expect(findJsonSyntaxError(valid)).toBeUndefined();
    const alphabet = ['"', "\\", "{", "}", "[", "]", ",", ":", "0", "-", "e", ".", "t", "n", " ", "\u0001", "u"];
    for (let i = 0; i < valid.length; i++) {
      for (const char of alphabet) {
        for (const text of [valid.slice(0, i) + char + valid.slice(i + 1), valid.slice(0, i) + char + valid.slice(i), valid.slice(0, i) + valid.slice(i + 1)]) {
          let parses = true;
          try {
            JSON.parse(text);
          } catch {
            parses = false;
          }
          expect(findJsonSyntaxError(text) === undefined, text).toBe(parses);
        }
      }
    }
  });

  test("a million brackets are no problem (no recursion)", () => {
    expect(findJsonSyntaxError("[".repeat(1_000_000))).toMatchObject({ offset: 1_000_000 });
  });
});
