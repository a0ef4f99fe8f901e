/**
 * The Gemini embeddings mapping (`src/embeddings.ts`): the request bodies of `embedContent` and
 * `batchEmbedContents`, text only, and their replies read into OpenAI's result, a usage only when
 * Gemini gave the token counts.
 */
import { describe, expect, it } from "vitest";
import { thrown } from "@modelmux/core/testing";
import { embeddingTexts, readBatchEmbedContents, readEmbedContent, toEmbeddingsResponse, toEmbedRequest } from "../src/embeddings.ts";

describe("Gemini embeddings", () => {
  it("takes texts, one or several", () => {
    expect(embeddingTexts({ model: "m", input: "hello" }, "gemini")).toEqual(["hello"]);
    expect(embeddingTexts({ model: "m", input: ["a", "b"] }, "gemini")).toEqual(["a", "b"]);
  });

  it("refuses token ids with a 400 naming input", () => {
    for (const input of [[1, 2], [[1], [2]]]) {
      expect(thrown(() => embeddingTexts({ model: "m", input }, "gemini"))).toMatchObject({
        status: 400,
        code: "unsupported_feature",
        param: "input",
        message: "input: provider 'gemini' is Gemini, which embeds text only: send the inputs as strings, not token ids.",
      });
    }
  });

  it("sends a text as one part, dimensions as outputDimensionality, the model only in a batch's items", () => {
    expect(toEmbedRequest("hello", undefined)).toEqual({ content: { parts: [{ text: "hello" }] } });
    expect(toEmbedRequest("hello", null)).toEqual({ content: { parts: [{ text: "hello" }] } });
    expect(toEmbedRequest("hello", 256, "models/gemini-embedding-001")).toEqual({
      model: "models/gemini-embedding-001",
      content: { parts: [{ text: "hello" }] },
      outputDimensionality: 256,
    });
  });

  it("reads both replies into vectors in order, without a usage Gemini did not give", () => {
    const one = readEmbedContent({ embedding: { values: [0.1, 0.2] } }, "gemini");
    const batch = readBatchEmbedContents({ embeddings: [{ values: [1] }, { values: [2] }] }, "gemini", 2);
    expect(toEmbeddingsResponse([one, ...batch], "gemini-embedding-001")).toEqual({
      object: "list",
      model: "gemini-embedding-001",
      data: [
        { object: "embedding", index: 0, embedding: [0.1, 0.2] },
        { object: "embedding", index: 1, embedding: [1] },
        { object: "embedding", index: 2, embedding: [2] },
      ],
    });
  });

  it("counts the tokens when every vector carries them", () => {
    const counted = readBatchEmbedContents({ embeddings: [{ values: [1], statistics: { tokenCount: 3 } }, { values: [2], statistics: { tokenCount: 4 } }] }, "gemini", 2);
    expect(toEmbeddingsResponse(counted, "m").usage).toEqual({ prompt_tokens: 7, total_tokens: 7 });
    const partly = readBatchEmbedContents({ embeddings: [{ values: [1], statistics: { tokenCount: 3 } }, { values: [2] }] }, "gemini", 2);
    expect(toEmbeddingsResponse(partly, "m")).not.toHaveProperty("usage");
  });

  it("is a 502 for a reply of another shape", () => {
    expect(thrown(() => readEmbedContent({ embeddings: [] }, "gemini"))).toMatchObject({ status: 502, message: "gemini: the embedding reply has no 'embedding.values'." });
    expect(thrown(() => readBatchEmbedContents({}, "gemini", 1))).toMatchObject({ status: 502 });
    expect(thrown(() => readBatchEmbedContents({ embeddings: [{ values: [1] }] }, "gemini", 2))).toMatchObject({ status: 502, message: "gemini: the batch embedding reply has 1 embeddings for 2 texts." });
    expect(thrown(() => readBatchEmbedContents({ embeddings: [{ value: [1] }] }, "gemini", 1))).toMatchObject({ message: "gemini: the embedding reply has no 'embeddings[0].values'." });
  });
});
