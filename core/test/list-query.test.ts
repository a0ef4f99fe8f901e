import { describe, expect, it } from "vitest";
import { parseCompletionsQuery } from "../src/stored/list-query.ts";
import { ModelmuxError } from "../src/errors.ts";

const parse = (query: string) => parseCompletionsQuery(new URLSearchParams(query));

describe("the completions list's metadata filters", () => {
  it("take any key an update may store, as own keys of an object without a prototype", () => {
    const { metadata } = parse("metadata[__proto__]=p&metadata[constructor]=c&metadata[]=e&metadata[a%0Ab]=n&metadata[x]y]=z");
    expect(Object.getPrototypeOf(metadata)).toBeNull();
    expect(Object.entries(metadata!)).toEqual([
      ["__proto__", "p"],
      ["constructor", "c"],
      ["", "e"],
      ["a\nb", "n"],
      ["x]y", "z"],
    ]);
    expect(({} as Record<string, unknown>).p).toBeUndefined();
  });

  it("refuses a key given twice, naming the parameter", () => {
    const error = (() => {
      try {
        parse("metadata[k]=1&metadata[k]=2");
      } catch (e) {
        return e;
      }
    })() as ModelmuxError;
    expect(error).toBeInstanceOf(ModelmuxError);
    expect(error.param).toBe("metadata[k]");
  });

  it("keeps `model` as given: the storage matches it against both names", () => {
    expect(parse("model=echo-1").model).toBe("echo-1");
    expect(parse("model=echo%2Fecho-1").model).toBe("echo/echo-1");
  });
});
