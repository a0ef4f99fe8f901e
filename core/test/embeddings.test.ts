/**
 * Embeddings in the core (docs/interface.md, "Embeddings"): the request body's rules, the base64
 * form of a vector, and the check of a provider's reply that gives the client one vector per input
 * in the form it asked for.
 */
import { describe, expect, it } from "vitest";
import { checkEmbeddings, type ExpectedEmbeddings } from "../src/embeddings/check-reply.ts";
import { decodeFloat32, encodeFloat32 } from "../src/embeddings/float32-base64.ts";
import { ModelmuxError } from "../src/errors.ts";
import { embeddingInputs, MAX_EMBEDDING_INPUTS } from "../src/schemas/embeddings-request.ts";
import type { EmbeddingsResponse } from "../src/types/embeddings.ts";
import { createRequestValidators } from "../src/validation/request-validators.ts";

const validators = createRequestValidators();
const body = (extra: Record<string, unknown> = {}) => ({ model: "echo/echo-1", input: "hello", ...extra });

function refusal(run: () => unknown): { status: number; message: string; code: string | null; param: string | null } {
  try {
    run();
  } catch (error) {
    if (!(error instanceof ModelmuxError)) throw error;
    const { message, code, param } = error.toEnvelope().error;
    return { status: error.status, message, code, param };
  }
  throw new Error("expected a refusal");
}

describe("the embeddings request", () => {
  it.each([
    ["one text", "hello"],
    ["texts", ["hello", "world"]],
    ["one input as token ids", [15339, 1917]],
    ["inputs as token ids", [[15339], [1917, 0]]],
    [`${MAX_EMBEDDING_INPUTS} texts`, Array(MAX_EMBEDDING_INPUTS).fill("x")],
  ])("takes %s", (_, input) => {
    expect(validators.embeddings(body({ input }))).toEqual(body({ input }));
  });

  it("takes OpenAI's optional fields, and null for each", () => {
    expect(() => validators.embeddings(body({ dimensions: 256, encoding_format: "base64", user: "u-1" }))).not.toThrow();
    expect(() => validators.embeddings(body({ dimensions: null, encoding_format: null, user: null }))).not.toThrow();
  });

  it.each([
    ["an empty text", "", "input", "input: must be at least 1 character"],
    ["no inputs", [], "input", "input: must have at least 1 item"],
    ["an empty text among others", ["a", ""], "input[1]", "input[1]: must be at least 1 character"],
    ["a number among texts", ["a", 1], "input[1]", "input[1]: must be a string"],
    ["an empty token list", [[1], []], "input[1]", "input[1]: must have at least 1 item"],
    ["a token id that is not an integer", [1.5], "input[0]", "input[0]: must be an integer"],
    ["a negative token id", [[-1]], "input[0][0]", "input[0][0]: must be >= 0"],
    ["an object", { text: "a" }, "input", "input: must be a string or an array"],
    ["too many texts", Array(MAX_EMBEDDING_INPUTS + 1).fill("x"), "input", `input: must have at most ${MAX_EMBEDDING_INPUTS} items`],
  ])("refuses %s, naming where", (_, input, param, message) => {
    expect(refusal(() => validators.embeddings(body({ input })))).toEqual({ status: 400, message, code: "invalid_value", param });
  });

  it("refuses bad dimensions and encodings, unknown fields, and a missing input", () => {
    expect(refusal(() => validators.embeddings(body({ dimensions: 0 })))).toMatchObject({ param: "dimensions", message: "dimensions: must be >= 1" });
    expect(refusal(() => validators.embeddings(body({ dimensions: 1.5 })))).toMatchObject({ param: "dimensions" });
    expect(refusal(() => validators.embeddings(body({ encoding_format: "hex" })))).toMatchObject({ message: "encoding_format: must be one of float, base64, or null" });
    expect(refusal(() => validators.embeddings(body({ task_type: "query" })))).toMatchObject({ code: "unknown_field", param: "task_type" });
    expect(refusal(() => validators.embeddings({ model: "m" }))).toMatchObject({ code: "missing_field", param: "input" });
  });

  it("counts one input per text or token list", () => {
    expect(embeddingInputs("a")).toEqual(["a"]);
    expect(embeddingInputs(["a", "b"])).toEqual(["a", "b"]);
    expect(embeddingInputs([1, 2, 3])).toEqual([[1, 2, 3]]);
    expect(embeddingInputs([[1], [2, 3]])).toEqual([[1], [2, 3]]);
  });
});

describe("float32 base64", () => {
  it("is OpenAI's form: little-endian float32 values", () => {
    const text = encodeFloat32([1, -2, 0.5]);
    const bytes = Buffer.from(text, "base64");
    expect([bytes.readFloatLE(0), bytes.readFloatLE(4), bytes.readFloatLE(8)]).toEqual([1, -2, 0.5]);
    expect(decodeFloat32(text)).toEqual([1, -2, 0.5]);
  });

  it("rounds to float32, as OpenAI's vectors are", () => {
    expect(decodeFloat32(encodeFloat32([0.1]))).toEqual([Math.fround(0.1)]);
  });

  it.each([["not base64", "@@@@"], ["bytes that are not whole floats", Buffer.from([1, 2, 3]).toString("base64")], ["NaN", encodeFloat32([Number.NaN])]])(
    "reads %s as no vector",
    (_, text) => {
      expect(decodeFloat32(text)).toBeUndefined();
    },
  );
});

describe("a provider's embeddings, checked", () => {
  const expected = (extra: Partial<ExpectedEmbeddings> = {}): ExpectedEmbeddings => ({ count: 2, encoding: "float", provider: "acme", model: "embed-1", ...extra });
  const reply = (data: unknown[], extra: Record<string, unknown> = {}) => ({ object: "list", data, model: "embed-1-v2", ...extra }) as EmbeddingsResponse;
  const vector = (index: number, embedding: unknown) => ({ object: "embedding", index, embedding });
  const upstreamFailure = (run: () => unknown) => {
    const error = refusal(run);
    expect(error).toMatchObject({ status: 502, code: "upstream_error" });
    return error.message;
  };

  it("orders the vectors by index and keeps the provider's model and usage", () => {
    const checked = checkEmbeddings(reply([vector(1, [0, 1]), vector(0, [1, 0])], { usage: { prompt_tokens: 4, total_tokens: 4 } }), expected());
    expect(checked).toEqual({
      object: "list",
      data: [vector(0, [1, 0]), vector(1, [0, 1])],
      model: "embed-1-v2",
      usage: { prompt_tokens: 4, total_tokens: 4 },
    });
  });

  it("gives base64 for numbers and numbers for base64, whichever the client asked", () => {
    const asBase64 = checkEmbeddings(reply([vector(0, [1, 0.5]), vector(1, [0, -1])]), expected({ encoding: "base64" }));
    expect(asBase64.data.map((item) => item.embedding)).toEqual([encodeFloat32([1, 0.5]), encodeFloat32([0, -1])]);
    const asNumbers = checkEmbeddings(reply([vector(0, encodeFloat32([1, 0.5])), vector(1, encodeFloat32([0, -1]))]), expected());
    expect(asNumbers.data.map((item) => item.embedding)).toEqual([
      [1, 0.5],
      [0, -1],
    ]);
  });

  it("leaves out a usage it cannot read, and names the bare model when the reply has none", () => {
    const checked = checkEmbeddings(reply([vector(0, [1]), vector(1, [1])], { model: undefined, usage: { total_tokens: 3 } }), expected());
    expect(checked.model).toBe("embed-1");
    expect(checked).not.toHaveProperty("usage");
  });

  it("is a 502 when it is not one vector per input, of the asked dimensions", () => {
    expect(upstreamFailure(() => checkEmbeddings(reply([vector(0, [1])]), expected()))).toBe("Provider 'acme' sent 1 embeddings for 2 inputs.");
    expect(upstreamFailure(() => checkEmbeddings(reply([vector(0, [1]), vector(0, [1])]), expected()))).toMatch(/indexes/);
    expect(upstreamFailure(() => checkEmbeddings(reply([vector(0, [1]), vector(1, ["1"])]), expected()))).toMatch(/not a vector of numbers \(input 1\)/);
    expect(upstreamFailure(() => checkEmbeddings(reply([vector(0, [1]), vector(1, "@@@@")]), expected()))).toMatch(/not base64/);
    expect(upstreamFailure(() => checkEmbeddings(reply([vector(0, [1, 2]), vector(1, [1, 2])]), expected({ dimensions: 3 })))).toMatch(/has 2 dimensions, not the 3 asked for/);
    expect(upstreamFailure(() => checkEmbeddings({} as EmbeddingsResponse, expected()))).toMatch(/without a 'data' list/);
  });
});
