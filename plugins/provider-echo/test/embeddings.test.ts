/**
 * Echo embeddings (README, "Embeddings"): the same text gets the same vector, texts that share words
 * are nearer than unrelated ones, every vector has length 1, and a request cannot ask for a huge reply.
 */
import { describe, expect, it } from "vitest";
import type { EmbeddingsRequest, EmbeddingsResponse } from "@modelmux/core";
import { ECHO_DIMENSIONS, MAX_ECHO_DIMENSIONS, echoVector } from "../src/embedding.ts";
import { call, offlineHttp, setupEcho } from "./helpers.ts";

const cosine = (a: readonly number[], b: readonly number[]) => a.reduce((sum, value, i) => sum + value * b[i]!, 0);
const norm = (v: readonly number[]) => Math.sqrt(cosine(v, v));

async function embed(fields: Partial<EmbeddingsRequest>): Promise<EmbeddingsResponse> {
  const provider = await setupEcho();
  return provider.embeddings!({ model: "echo-1", input: "hello", ...fields }, call());
}

const vectorsOf = (reply: EmbeddingsResponse) => reply.data.map((item) => item.embedding as number[]);

describe("echo embeddings", () => {
  it("gives one unit vector of 256 numbers per input, in order, with the echo's token count", async () => {
    const reply = await embed({ input: ["the cat sat on the mat", "hello"] });
    expect(reply.object).toBe("list");
    expect(reply.model).toBe("echo-1");
    expect(reply.data.map((item) => [item.object, item.index])).toEqual([
      ["embedding", 0],
      ["embedding", 1],
    ]);
    for (const vector of vectorsOf(reply)) {
      expect(vector).toHaveLength(ECHO_DIMENSIONS);
      expect(norm(vector)).toBeCloseTo(1, 5);
    }
    // ceil(22 / 4) + ceil(5 / 4): a token per 4 characters, as echo's chat counts.
    expect(reply.usage).toEqual({ prompt_tokens: 8, total_tokens: 8 });
    expect(offlineHttp.calls).toBe(0);
  });

  it("gives the same text the same vector, in any request", async () => {
    const [first] = vectorsOf(await embed({ input: "Paris is the capital of France" }));
    const [, again] = vectorsOf(await embed({ input: ["something else", "Paris is the capital of France"] }));
    expect(again).toEqual(first);
  });

  it("puts texts that share words nearer than unrelated ones", () => {
    const base = echoVector("The quick brown fox jumps over the lazy dog", 256);
    const close = echoVector("the quick brown fox jumped over the lazy dogs", 256);
    const related = echoVector("A brown dog naps in the garden", 256);
    const unrelated = echoVector("Quarterly revenue grew seven percent in Europe", 256);
    expect(cosine(base, close)).toBeGreaterThan(cosine(base, related));
    expect(cosine(base, related)).toBeGreaterThan(cosine(base, unrelated));
    expect(cosine(base, close)).toBeGreaterThan(0.7);
    expect(Math.abs(cosine(base, unrelated))).toBeLessThan(0.3);
  });

  it("ignores case and punctuation", () => {
    expect(echoVector("Hello, World!", 64)).toEqual(echoVector("hello world", 64));
  });

  it("takes dimensions, and numbers that are exact float32 values", async () => {
    const [vector] = vectorsOf(await embed({ input: "hello", dimensions: 8 }));
    expect(vector).toHaveLength(8);
    expect(vector!.map(Math.fround)).toEqual(vector);
    expect(norm(vector!)).toBeCloseTo(1, 5);
  });

  it("embeds token ids as the text of the ids, counting one token each", async () => {
    const reply = await embed({ input: [[15339, 1917], [15339]] });
    expect(vectorsOf(reply)[0]).toEqual(echoVector("15339 1917", ECHO_DIMENSIONS));
    expect(reply.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
  });

  it("gives text without letters or digits a unit vector too", () => {
    expect(norm(echoVector("?!", 16))).toBeCloseTo(1, 5);
    expect(norm(echoVector("   ", 16))).toBeCloseTo(1, 5);
  });

  it("refuses a reply past its bounds with a 400 naming the field", async () => {
    await expect(embed({ dimensions: MAX_ECHO_DIMENSIONS + 1 })).rejects.toMatchObject({ status: 400, param: "dimensions" });
    await expect(embed({ input: Array(2048).fill("x"), dimensions: 1024 })).rejects.toMatchObject({ status: 400, param: "input", message: expect.stringMatching(/at most 1024 inputs of 1024 dimensions/) });
    await expect(embed({ input: Array(2048).fill("x"), dimensions: 512 })).resolves.toMatchObject({ object: "list" });
  });
});
