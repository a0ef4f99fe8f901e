import { describe, expect, it } from "vitest";
import { rawJsonOf, withRawJson } from "../src/chat/raw-json.ts";

describe("withRawJson", () => {
  it("gives the object its text, and nothing else sees it", () => {
    const chunk = withRawJson({ id: "c", choices: [] as unknown[] }, '{"id":"c","choices":[]}');
    expect(rawJsonOf(chunk)).toBe('{"id":"c","choices":[]}');
    expect(JSON.stringify(chunk)).toBe('{"id":"c","choices":[]}');
    expect(Reflect.ownKeys(chunk)).toEqual(["id", "choices"]);
    expect(chunk).toStrictEqual({ id: "c", choices: [] });
    expect(rawJsonOf(structuredClone(chunk))).toBeUndefined();
  });

  it("does not go with a copy, which may have been changed", () => {
    const chunk = withRawJson({ id: "c", model: "m" }, '{"id":"c","model":"m"}');
    expect(rawJsonOf({ ...chunk, model: "other" })).toBeUndefined();
    expect(rawJsonOf(Object.assign({}, chunk))).toBeUndefined();
    expect(rawJsonOf({ id: "c", model: "m" })).toBeUndefined();
  });

  it("replaces the text of an object given one before", () => {
    const chunk = withRawJson({ id: "c" }, '{"id": "c"}');
    expect(withRawJson(chunk, '{"id":"c"}')).toBe(chunk);
    expect(rawJsonOf(chunk)).toBe('{"id":"c"}');
  });

  it("leaves a frozen object without a text (it is serialised), instead of throwing", () => {
    const frozen = Object.freeze({ id: "c" });
    expect(withRawJson(frozen, '{"id":"c"}')).toBe(frozen);
    expect(rawJsonOf(frozen)).toBeUndefined();
  });
});
