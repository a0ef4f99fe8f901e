import { Ajv } from "ajv";
import { expect, test } from "vitest";
import echo from "../src/index.ts";

const validate = new Ajv({ useDefaults: true }).compile(echo.optionsSchema);

test("is a provider plugin named echo", () => {
  expect(echo).toMatchObject({ kind: "provider", name: "echo" });
});

test("accepts good options and fills in the defaults", () => {
  const options = {};
  expect(validate(options)).toBe(true);
  expect(options).toEqual({ chunk_size: 8, delay_ms: 0, prefix: "" });
  expect(validate({ chunk_size: 1, delay_ms: 250, prefix: "echo: " })).toBe(true);
});

test.each([
  [{ chunk_size: 0 }, "minimum"],
  [{ chunk_size: 2.5 }, "type"],
  [{ chunk_size: "8" }, "type"],
  [{ delay_ms: -1 }, "minimum"],
  [{ prefix: 3 }, "type"],
  [{ chunksize: 8 }, "additionalProperties"],
])("rejects %j", (options, keyword) => {
  expect(validate(options)).toBe(false);
  expect(validate.errors?.[0]?.keyword).toBe(keyword);
});
