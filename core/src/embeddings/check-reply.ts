/**
 * A provider's embeddings, checked and put in the form the client asked for (docs/interface.md,
 * "Embeddings"): one vector per input, in input order, of the asked `dimensions`, numbers or base64
 * as `encoding_format` says whatever form the provider gave. A reply that breaks these is the
 * provider failing (502), so the request moves on to its next target.
 */
import { upstreamError } from "../errors.ts";
import type { EmbeddingEncoding } from "../schemas/embeddings-request.ts";
import type { Embedding, EmbeddingsResponse, EmbeddingsUsage } from "../types/embeddings.ts";
import { decodeFloat32, encodeFloat32 } from "./float32-base64.ts";

/** What the reply must hold. */
export interface ExpectedEmbeddings {
  /** The number of inputs. */
  count: number;
  /** The request's `dimensions`, when it set one. */
  dimensions?: number | null;
  /** The request's `encoding_format`; `float` when unset. */
  encoding: EmbeddingEncoding;
  /** The provider's name, for the errors. */
  provider: string;
  /** The bare model id, when the reply names none. */
  model: string;
}

const isVector = (value: unknown): value is number[] =>
  Array.isArray(value) && value.length > 0 && value.every((n) => typeof n === "number" && Number.isFinite(n));

/** The vector of one item in the client's encoding, or why it is not one. */
function encoded(raw: unknown, encoding: EmbeddingEncoding, dimensions: number | null | undefined): { value: number[] | string } | { problem: string } {
  let length: number;
  let value: number[] | string;
  if (typeof raw === "string") {
    const numbers = decodeFloat32(raw);
    if (!numbers || numbers.length === 0) return { problem: "is not base64 of float32 values" };
    length = numbers.length;
    value = encoding === "base64" ? raw : numbers;
  } else if (isVector(raw)) {
    length = raw.length;
    value = encoding === "base64" ? encodeFloat32(raw) : raw;
  } else {
    return { problem: "is not a vector of numbers" };
  }
  if (dimensions != null && length !== dimensions) return { problem: `has ${length} dimensions, not the ${dimensions} asked for` };
  return { value };
}

function usageOf(raw: unknown): EmbeddingsUsage | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const { prompt_tokens: prompt, total_tokens: total } = raw as Record<string, unknown>;
  if (typeof prompt !== "number" || !Number.isFinite(prompt) || prompt < 0) return undefined;
  return { prompt_tokens: prompt, total_tokens: typeof total === "number" && Number.isFinite(total) && total >= prompt ? total : prompt };
}

/**
 * The reply the client gets from what the provider's `embeddings` returned.
 * @throws 502 `upstream_error` naming what is wrong
 */
export function checkEmbeddings(reply: EmbeddingsResponse, expected: ExpectedEmbeddings): EmbeddingsResponse {
  const { count, provider } = expected;
  const data: unknown = (reply as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) throw upstreamError(`Provider '${provider}' sent an embeddings reply without a 'data' list.`);
  if (data.length !== count) throw upstreamError(`Provider '${provider}' sent ${data.length} embeddings for ${count} inputs.`);
  const ordered = new Array<Embedding | undefined>(count);
  data.forEach((item: unknown, position) => {
    const { index: rawIndex, embedding } = (typeof item === "object" && item !== null ? item : {}) as Record<string, unknown>;
    const index = rawIndex === undefined ? position : rawIndex;
    if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || index >= count || ordered[index]) {
      throw upstreamError(`Provider '${provider}' sent embeddings whose indexes are not each input's once (item ${position}).`);
    }
    const result = encoded(embedding, expected.encoding, expected.dimensions);
    if ("problem" in result) throw upstreamError(`Provider '${provider}' sent an embedding that ${result.problem} (input ${index}).`);
    ordered[index] = { object: "embedding", index, embedding: result.value };
  });
  const checked: EmbeddingsResponse = {
    object: "list",
    data: ordered as Embedding[],
    model: typeof reply.model === "string" && reply.model !== "" ? reply.model : expected.model,
  };
  const usage = usageOf(reply.usage);
  if (usage) checked.usage = usage;
  return checked;
}
