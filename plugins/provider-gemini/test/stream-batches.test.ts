/**
 * `readGeminiStreamBatches` against the event-by-event mapping: whatever way the body is cut into
 * reads, the batches hold the same chunks as `createChunkMapper` makes of the parsed events.
 */
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { replyBody, type ChatCompletionChunk, type HttpBody } from "@modelmux/core";
import { createChunkMapper, readGeminiStreamBatches } from "../src/stream.ts";

const OPTIONS = { provider: "gemini", model: "gemini-2.5-flash", timeoutMs: 1000 };

/** One event; `createTime` fixes `created`, so every reader's chunks are equal byte for byte. */
const event = (parts: object[], extra: { finishReason?: string } = {}, top: object = {}) => ({
  candidates: [{ content: { role: "model", parts }, index: 0, ...extra }],
  modelVersion: "gemini-2.5-flash",
  responseId: "resp-1",
  createTime: "2025-11-22T08:00:00.000000Z",
  ...top,
});

const usage = { usageMetadata: { promptTokenCount: 24, candidatesTokenCount: 20, thoughtsTokenCount: 3, totalTokenCount: 47 } };

/** Twenty text events, the last one finishing, with usage: the shape of the bench's streams. */
const TEXT = [
  ...Array.from({ length: 19 }, (_, i) => event([{ text: i === 0 ? "Routers" : ` token${i} é 🙂` }], {}, { usageMetadata: { promptTokenCount: 24 } })),
  event([{ text: " token19" }], { finishReason: "STOP" }, usage),
];

/** Text, a thought, then two whole function calls in one event. */
const TOOLS = [
  event([{ text: "pondering", thought: true }]),
  event([{ text: "Checking \"quotes\"\n" }]),
  event([{ functionCall: { name: "get_weather", args: { city: "Paris" } } }, { functionCall: { id: "fc-2", name: "now", args: {} } }], { finishReason: "STOP" }, usage),
];

const sse = (events: readonly object[]) => events.map((e) => `data: ${JSON.stringify(e)}\r\n\r\n`).join("");

/** The event-by-event mapping of the parsed events, end included: what every reader must give. */
function reference(events: readonly object[]): string[] {
  const mapper = createChunkMapper(OPTIONS);
  return [...events.flatMap((e) => mapper.map(JSON.parse(JSON.stringify(e)))), ...mapper.end()].map((chunk) => JSON.stringify(chunk));
}

const reads = (...pieces: Buffer[]): HttpBody => replyBody(pieces);

async function batchesOf(body: HttpBody): Promise<ChatCompletionChunk[][]> {
  const batches: ChatCompletionChunk[][] = [];
  for await (const batch of readGeminiStreamBatches(body, OPTIONS)) batches.push(batch);
  return batches;
}

describe("readGeminiStreamBatches", () => {
  it.each([
    ["a text reply", TEXT],
    ["a reply with function calls", TOOLS],
  ])("gives the chunks of the event-by-event mapping for %s, however the body is cut in two reads", async (_, events) => {
    const bytes = Buffer.from(sse(events));
    const expected = JSON.stringify(reference(events));
    const mismatches: number[] = [];
    for (let cut = 0; cut <= bytes.length; cut++) {
      const body = () => reads(bytes.subarray(0, cut), bytes.subarray(cut));
      const batches = await batchesOf(body());
      const same = (got: ChatCompletionChunk[]) => JSON.stringify(got.map((chunk) => JSON.stringify(chunk))) === expected;
      if (batches.some((batch) => batch.length === 0) || !same(batches.flat())) mismatches.push(cut);
    }
    expect(mismatches).toEqual([]);
  });

  it("gives one batch per read, the usage chunk in the batch of the event that finishes the answer", async () => {
    const batches = await batchesOf(reads(Buffer.from(sse(TEXT))));
    expect(batches.map((batch) => batch.length)).toEqual([reference(TEXT).length]);
    expect(batches[0]!.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 24, completion_tokens: 23 } });
  });

  it("hands over the usage chunk with the last event while the body is still open", async () => {
    const open = new Readable({ read() {} });
    open.push(sse(TEXT));
    const body = replyBody(open);
    const batches = readGeminiStreamBatches(body, OPTIONS);
    const first = await batches.next();
    expect(first.done).toBe(false);
    expect((first.value as ChatCompletionChunk[]).at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 24, completion_tokens: 23 } });
    // Let go of: the rest is read until the next turn of the event loop, then the body destroyed.
    await batches.return(undefined);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(body.destroyed).toBe(true);
  });

  it("yields the chunks before an error event in the same read, then throws the mapped error", async () => {
    const error = { error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" } };
    const batches: ChatCompletionChunk[][] = [];
    const run = async () => {
      for await (const batch of readGeminiStreamBatches(reads(Buffer.from(sse([...TEXT.slice(0, 3), error, ...TEXT.slice(3)]))), OPTIONS)) batches.push(batch);
    };
    await expect(run()).rejects.toMatchObject({ status: 502, message: expect.stringContaining("The model is overloaded.") });
    expect(batches.map((batch) => batch.map((chunk) => JSON.stringify(chunk)))).toEqual([reference(TEXT).slice(0, 3)]);
  });

  it("yields the chunks before an event that is not JSON in the same read, then throws 502", async () => {
    const batches: ChatCompletionChunk[][] = [];
    const run = async () => {
      for await (const batch of readGeminiStreamBatches(reads(Buffer.from(`${sse(TEXT.slice(0, 2))}data: {oops\r\n\r\n${sse(TEXT.slice(2))}`)), OPTIONS)) batches.push(batch);
    };
    await expect(run()).rejects.toMatchObject({ status: 502, message: "gemini: a stream event is not valid JSON." });
    expect(batches.map((batch) => batch.length)).toEqual([2]);
  });

  it("throws 502 after the last batch when the body ends before a finish reason", async () => {
    const batches: ChatCompletionChunk[][] = [];
    const run = async () => {
      for await (const batch of readGeminiStreamBatches(reads(Buffer.from(sse(TEXT.slice(0, 4)))), OPTIONS)) batches.push(batch);
    };
    await expect(run()).rejects.toMatchObject({ status: 502, message: "gemini: the stream ended before the reply was complete." });
    expect(batches.map((batch) => batch.length)).toEqual([4]);
  });
});
