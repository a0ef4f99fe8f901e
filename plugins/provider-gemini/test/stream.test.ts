import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { replyBody, type ChatCompletionChunk, type HttpBody } from "@modelmux/core";
import { toolCallId } from "../src/response.ts";
import { createChunkMapper, readGeminiStreamBatches } from "../src/stream.ts";
import { itemsOf } from "../../../test/helpers/provider-call.ts";

const context = { provider: "gemini", model: "gemini-2.5-flash" };
const event = (parts: object[], extra: { finishReason?: string; index?: number } = {}, top: object = {}) => ({
  candidates: [{ content: { role: "model", parts }, ...extra }],
  modelVersion: "gemini-2.5-flash",
  responseId: "resp-1",
  ...top,
});

/** Maps a whole stream of events, end included. */
function mapAll(events: unknown[], choices?: number): ChatCompletionChunk[] {
  const mapper = createChunkMapper({ ...context, choices });
  return [...events.flatMap((e) => mapper.map(e)), ...mapper.end()];
}

/** An SSE body delivered in small arbitrary pieces, to prove events are reassembled across reads. */
function body(events: unknown[], pieceSize = 9): HttpBody {
  const text = events.map((e) => `data: ${JSON.stringify(e)}\r\n\r\n`).join("");
  const pieces = text.match(new RegExp(`[\\s\\S]{1,${pieceSize}}`, "g")) ?? [];
  return replyBody(pieces.map((p) => Buffer.from(p)));
}

async function collect(items: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const out: ChatCompletionChunk[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe("createChunkMapper", () => {
  it("maps text events to content deltas: role first, finish chunk, usage last; one id throughout", () => {
    const chunks = mapAll([
      event([{ text: "Hel" }], {}, { usageMetadata: { promptTokenCount: 4 } }),
      event([{ text: "lo" }]),
      event([{ text: "!" }], { finishReason: "STOP" }, { usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 3, thoughtsTokenCount: 2, totalTokenCount: 9 } }),
    ]);
    expect(chunks.map((c) => c.choices[0]?.delta)).toEqual([{ role: "assistant", content: "Hel" }, { content: "lo" }, { content: "!" }, {}, undefined]);
    expect(chunks[3]!.choices[0]).toEqual({ index: 0, delta: {}, finish_reason: "stop", native_finish_reason: "STOP" });
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 4, completion_tokens: 5, total_tokens: 9, completion_tokens_details: { reasoning_tokens: 2 } },
    });
    expect(new Set(chunks.map((c) => c.id))).toEqual(new Set(["chatcmpl-resp-1"]));
    expect(new Set(chunks.map((c) => c.created)).size).toBe(1);
    expect(chunks.every((c) => c.object === "chat.completion.chunk" && c.model === "gemini-2.5-flash")).toBe(true);
  });

  it("leaves thoughts out and sends no empty deltas", () => {
    const chunks = mapAll([event([{ text: "pondering", thought: true }]), event([{ text: "" }]), event([{ text: "42" }], { finishReason: "STOP" })]);
    expect(chunks.map((c) => c.choices[0]?.delta)).toEqual([{ role: "assistant", content: "42" }, {}]);
  });

  it("maps a whole function call to one tool-call delta and finishes with tool_calls", () => {
    const call = { name: "get_weather", args: { city: "Paris" } };
    const chunks = mapAll([event([{ text: "Checking." }]), event([{ functionCall: call }, { functionCall: { id: "fc-2", name: "get_time", args: {} } }], { finishReason: "STOP" })]);
    expect(chunks[1]!.choices[0]!.delta.tool_calls).toEqual([
      { index: 0, id: toolCallId("resp-1", 0, 0, call), type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
      { index: 1, id: "fc-2", type: "function", function: { name: "get_time", arguments: "{}" } },
    ]);
    expect(chunks[2]!.choices[0]).toMatchObject({ finish_reason: "tool_calls", native_finish_reason: "STOP" });
  });

  it("numbers tool calls across events", () => {
    const chunks = mapAll([event([{ functionCall: { name: "a", args: {} } }]), event([{ functionCall: { name: "b", args: {} } }], { finishReason: "STOP" })]);
    expect(chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []).map((d) => [d.index, d.function?.name])).toEqual([
      [0, "a"],
      [1, "b"],
    ]);
    expect(chunks[0]!.choices[0]!.delta.role).toBe("assistant");
    expect(chunks[1]!.choices[0]!.delta.role).toBeUndefined();
  });

  it("puts the role on the finish chunk when nothing came before it (safety stop)", () => {
    const chunks = mapAll([event([], { finishReason: "SAFETY" })]);
    expect(chunks[0]!.choices[0]).toEqual({ index: 0, delta: { role: "assistant" }, finish_reason: "content_filter", native_finish_reason: "SAFETY" });
  });

  it("maps a blocked prompt to one content_filter chunk", () => {
    const chunks = mapAll([{ promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 3, totalTokenCount: 3 }, responseId: "r" }]);
    expect(chunks[0]!.choices[0]).toEqual({ index: 0, delta: { role: "assistant", content: null }, finish_reason: "content_filter", native_finish_reason: "SAFETY" });
    expect(chunks[1]!.usage).toEqual({ prompt_tokens: 3, completion_tokens: 0, total_tokens: 3 });
  });

  it("finishes each of the n choices asked for on a blocked prompt", () => {
    const chunks = mapAll([{ promptFeedback: { blockReason: "SAFETY" }, responseId: "r" }], 3);
    expect(chunks.map((c) => c.choices)).toEqual([0, 1, 2].map((index) => [{ index, delta: { role: "assistant", content: null }, finish_reason: "content_filter", native_finish_reason: "SAFETY" }]));
  });

  it("keeps candidates apart by index", () => {
    const two = (a: string, b: string, finishReason?: string) => ({
      candidates: [
        { content: { parts: [{ text: a }] }, index: 0, finishReason },
        { content: { parts: [{ text: b }] }, index: 1, finishReason },
      ],
    });
    const chunks = mapAll([two("a1", "b1"), two("a2", "b2", "STOP")]);
    const text = (i: number) => chunks.flatMap((c) => c.choices.filter((ch) => ch.index === i).map((ch) => ch.delta.content ?? "")).join("");
    expect(text(0)).toBe("a1a2");
    expect(text(1)).toBe("b1b2");
    expect(chunks.filter((c) => c.choices[0]?.delta.role === "assistant").map((c) => c.choices[0]!.index)).toEqual([0, 1]);
  });

  it("throws the mapped error for an error event", () => {
    const mapper = createChunkMapper({ ...context, secret: "AIzaSecretKey1234567890" });
    expect(() => mapper.map({ error: { code: 429, message: "Quota exceeded", status: "RESOURCE_EXHAUSTED" } })).toThrow(expect.objectContaining({ status: 429 }));
    expect(() => mapper.map({ error: { code: 500, message: "Internal error, key AIzaSecretKey1234567890", status: "INTERNAL" } })).toThrow(
      expect.objectContaining({ status: 502, message: expect.not.stringContaining("AIzaSecret") }),
    );
  });

  it("throws 502 when the stream ends before a finish reason, or carried nothing", () => {
    const mapper = createChunkMapper(context);
    mapper.map(event([{ text: "half" }]));
    expect(() => mapper.end()).toThrow(expect.objectContaining({ status: 502, code: "upstream_error" }));
    expect(() => createChunkMapper(context).end()).toThrow(expect.objectContaining({ status: 502 }));
  });

  it("sends the usage chunk with the event that finishes the last candidate, when that event has usage", () => {
    const usage = { usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 3, totalTokenCount: 7 } };
    const mapper = createChunkMapper({ ...context, choices: 2 });
    expect(mapper.map(event([{ text: "a" }], { index: 0, finishReason: "STOP" }, usage)).some((c) => c.choices.length === 0)).toBe(false);
    const last = mapper.map(event([{ text: "b" }], { index: 1, finishReason: "STOP" }, usage));
    expect(last.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 } });
    expect(mapper.end()).toEqual([]);
    // Without usage on that event, the last usage reported comes at the body's end, as before.
    const late = createChunkMapper(context);
    late.map(event([{ text: "a" }], {}, { usageMetadata: { promptTokenCount: 4 } }));
    expect(late.map(event([{ text: "b" }], { finishReason: "STOP" })).some((c) => c.choices.length === 0)).toBe(false);
    expect(late.end()).toMatchObject([{ choices: [], usage: { prompt_tokens: 4 } }]);
  });

  it("sends no usage chunk when the upstream reported none", () => {
    const chunks = mapAll([{ candidates: [{ content: { parts: [{ text: "x" }] }, finishReason: "STOP" }] }]);
    expect(chunks.some((c) => c.choices.length === 0)).toBe(false);
    expect(chunks[0]!.model).toBe("gemini-2.5-flash");
  });
});

/** The reader's items one at a time, as the core frames them. */
const readItems = (...args: Parameters<typeof readGeminiStreamBatches>) => itemsOf(readGeminiStreamBatches(...args));

describe("readGeminiStreamBatches, item by item", () => {
  const options = { ...context, timeoutMs: 1000 };

  it("reads CRLF-separated events split across reads", async () => {
    const chunks = await collect(
      readItems(body([event([{ text: "one " }]), event([{ text: "two" }], { finishReason: "STOP" }, { usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 2 } })]), options),
    );
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("one two");
    expect(chunks.at(-1)!.usage).toEqual({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
  });

  it("throws 502 for an event that is not JSON", async () => {
    const broken = replyBody([Buffer.from("data: {not json\n\n")]);
    await expect(collect(readItems(broken, options))).rejects.toMatchObject({ status: 502, message: "gemini: a stream event is not valid JSON." });
  });

  it("yields the chunks so far, then throws 502 when the body breaks off", async () => {
    const broken = new Readable({ read() {} });
    broken.push(`data: ${JSON.stringify(event([{ text: "a" }]))}\n\n`);
    setTimeout(() => broken.destroy(Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" })), 5);
    const seen: ChatCompletionChunk[] = [];
    const run = async () => {
      for await (const chunk of readItems(replyBody(broken), options)) seen.push(chunk);
    };
    await expect(run()).rejects.toMatchObject({ status: 502, code: "upstream_error" });
    expect(seen).toHaveLength(1);
  });

  it("throws 504 when the body stalls past the timeout", async () => {
    const stalled = new Readable({ read() {} });
    setTimeout(() => stalled.destroy(Object.assign(new Error("body timeout"), { code: "UND_ERR_BODY_TIMEOUT" })), 5);
    await expect(collect(readItems(replyBody(stalled), options))).rejects.toMatchObject({ status: 504, code: "upstream_timeout" });
  });
});
