/**
 * The conformance cases of a provider with `embeddings` (docs/plugins.md, "Embeddings"), through the
 * router: one vector per input in input order, the same text the same vector, base64 the same vector
 * as the numbers, `dimensions` honoured, the bare model sent, and (with an upstream) its errors and
 * unreadable replies. A provider without `embeddings` skips them; one with it must name a model.
 */
import { describe, expect, it } from "vitest";
import type { EmbeddingsResponse } from "../types/embeddings.ts";
import type { KitContext } from "./test-provider.ts";

type Reply = EmbeddingsResponse & { data: Array<{ embedding: number[] }> };

const isVector = (value: unknown) => Array.isArray(value) && value.length > 0 && value.every((n) => typeof n === "number" && Number.isFinite(n));

/** Little-endian float32 base64, read back. */
function decode(text: string): number[] {
  const bytes = Buffer.from(text, "base64");
  return Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
}

export function embeddingCases(kit: () => KitContext, withUpstream: boolean): void {
  /** The embedding model, or the case is skipped (the provider has no embeddings). */
  const model = (test: { skip(): void }) => {
    const name = kit().embeddingModel;
    if (name === undefined) test.skip();
    return name!;
  };
  const embed = async (body: Record<string, unknown>, status = 200) => {
    const res = await kit().embeddings(body);
    const reply = (await res.json()) as Reply & { error?: { message: string; code: string | null } };
    expect(res.status, JSON.stringify(reply).slice(0, 300)).toBe(status);
    return reply;
  };

  describe("embeddings", () => {
    it("a provider with embeddings names a model that has them (embeddingModel)", (test) => {
      const provider = kit().router.models.resolve(kit().model).instance;
      if (typeof provider.embeddings !== "function") return test.skip();
      expect(kit().embeddingModel, "the provider has embeddings: give testProvider an `embeddingModel` with the `embeddings` capability").toBeDefined();
      expect(kit().router.models.resolve(kit().embeddingModel!).capabilities.embeddings).toBe(true);
    });

    it("answers one text with one vector of numbers, asking the upstream for the bare model", async (test) => {
      const name = model(test);
      const reply = await embed({ model: name, input: "The quick brown fox", encoding_format: "float" });
      expect(reply).toMatchObject({ object: "list", data: [{ object: "embedding", index: 0 }] });
      expect(reply.data).toHaveLength(1);
      expect(isVector(reply.data[0]!.embedding)).toBe(true);
      expect(typeof reply.model).toBe("string");
      if (reply.usage) expect(reply.usage.total_tokens).toBeGreaterThanOrEqual(reply.usage.prompt_tokens);
      const received = kit().upstream?.requests[0];
      if (received) expect(kit().reader!.model(received)).toBe(name.slice("kit/".length));
    });

    it("answers several texts in input order, the same text with the same vector", async (test) => {
      const reply = await embed({ model: model(test), input: ["alpha beta", "gamma", "alpha beta"], encoding_format: "float" });
      expect(reply.data.map((item) => item.index)).toEqual([0, 1, 2]);
      expect(reply.data[2]!.embedding).toEqual(reply.data[0]!.embedding);
      expect(reply.data[1]!.embedding).toHaveLength(reply.data[0]!.embedding.length);
    });

    it("gives base64 of the same vector's little-endian float32 values", async (test) => {
      const name = model(test);
      const numbers = await embed({ model: name, input: "same vector", encoding_format: "float" });
      const base64 = await embed({ model: name, input: "same vector", encoding_format: "base64" });
      expect(typeof base64.data[0]!.embedding).toBe("string");
      expect(decode(base64.data[0]!.embedding as unknown as string)).toEqual(numbers.data[0]!.embedding.map(Math.fround));
    });

    it("gives vectors of the dimensions asked for", async (test) => {
      const reply = await embed({ model: model(test), input: ["short", "vectors"], dimensions: 8, encoding_format: "float" });
      for (const item of reply.data) expect(item.embedding).toHaveLength(8);
    });

    it("refuses a model without embeddings before any upstream call", async (test) => {
      model(test);
      if (kit().router.models.resolve(kit().model).capabilities.embeddings) return test.skip();
      const reply = await embed({ model: kit().model, input: "x" }, 400);
      expect(reply.error).toMatchObject({ code: "unsupported_feature" });
      expect(kit().upstream?.requests ?? []).toHaveLength(0);
    });

    it.skipIf(!withUpstream)("keeps an upstream error's status, and makes an unreadable reply a 502", async (test) => {
      const name = model(test);
      kit().upstream!.next({ error: { status: 400, message: "The input is not acceptable." } });
      const refused = await embed({ model: name, input: "x" }, 400);
      expect(refused.error!.message).toContain("The input is not acceptable.");
      kit().upstream!.next({ malformed: true });
      expect((await embed({ model: name, input: "x" }, 502)).error).toMatchObject({ code: "upstream_error" });
    });
  });
}
