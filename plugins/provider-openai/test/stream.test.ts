import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { replyBody, type ChatStreamItem, type HttpBody } from "@modelmux/core";
import { readChatStream, readChatStreamBatches } from "../src/stream.ts";


/** An SSE body delivered in arbitrary pieces, to prove events are reassembled across reads. */
function body(text: string, pieceSize = 7): HttpBody {
  const pieces = text.match(new RegExp(`[\\s\\S]{1,${pieceSize}}`, "g")) ?? [];
  return replyBody(pieces.map((p) => Buffer.from(p)));
}

async function collect(items: AsyncIterable<ChatStreamItem>): Promise<ChatStreamItem[]> {
  const out: ChatStreamItem[] = [];
  for await (const item of items) out.push(item);
  return out;
}

const chunk = (content: string) => `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":null}]}`;
const finish = (index = 0) => `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":${index},"delta":{},"finish_reason":"stop"}]}`;

describe("readChatStream", () => {
  it("yields each payload as its raw string, byte for byte, in order, and stops at [DONE]", async () => {
    // Odd spacing that a parse-and-serialise round trip would normalise away.
    const payloads = [chunk("Hel"), chunk("lo"), finish(), '{"id":"c", "choices":[],  "usage":{"prompt_tokens":1}}'];
    const sse = `: keep-alive\n\n${payloads.map((p) => `data: ${p}\n\n`).join("")}data: [DONE]\n\ndata: ${chunk("after done")}\n\n`;
    expect(await collect(readChatStream(body(sse), { provider: "openai", timeoutMs: 1000 }))).toEqual(payloads);
  });

  it("passes on content that merely mentions errors", async () => {
    const payload = chunk('the "error" was mine');
    expect(await collect(readChatStream(body(`data: ${payload}\n\ndata: ${finish()}\n\ndata: [DONE]\n\n`), { provider: "openai", timeoutMs: 1000 }))).toEqual([payload, finish()]);
  });

  it("throws 502 with the upstream's message for an error payload, after the chunks before it", async () => {
    const error = '{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}';
    const seen: ChatStreamItem[] = [];
    const run = async () => {
      for await (const item of readChatStream(body(`data: ${chunk("a")}\n\ndata: ${error}\n\n`), { provider: "openai", timeoutMs: 1000 })) seen.push(item);
    };
    await expect(run()).rejects.toMatchObject({ status: 502, code: "upstream_error", message: "openai: The server had an error" });
    expect(seen).toHaveLength(1);
  });

  it("treats `event: error` as an error", async () => {
    await expect(collect(readChatStream(body('event: error\ndata: {"message":"boom"}\n\n'), { provider: "openai", timeoutMs: 1000 }))).rejects.toMatchObject({
      status: 502,
      message: "openai: boom",
    });
  });

  it("redacts the key from an in-stream error", async () => {
    const sse = 'data: {"error":{"message":"bad key sk-very-secret"}}\n\n';
    const error = await collect(readChatStream(body(sse), { provider: "openai", timeoutMs: 1000, secret: "sk-very-secret" })).catch((e: Error) => e);
    expect((error as Error).message).not.toContain("secret");
  });

  it("throws 502 when the body carries no events at all", async () => {
    await expect(collect(readChatStream(body('{"choices":[]}'), { provider: "openai", timeoutMs: 1000 }))).rejects.toMatchObject({ status: 502, code: "upstream_error" });
  });

  it("throws 502 when the body breaks off", async () => {
    const broken = new Readable({ read() {} });
    broken.push(`data: ${chunk("a")}\n\n`);
    setTimeout(() => broken.destroy(Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" })), 5);
    await expect(collect(readChatStream(replyBody(broken), { provider: "openai", timeoutMs: 1000 }))).rejects.toMatchObject({ status: 502, code: "upstream_error" });
  });
});

describe("readChatStreamBatches", () => {
  const options = { provider: "openai", timeoutMs: 1000 };
  /** A body delivered in exactly these reads. */
  const reads = (...texts: string[]) => replyBody(texts.map((t) => Buffer.from(t)));
  const frames = (...payloads: string[]) => payloads.map((p) => `data: ${p}\n\n`).join("");

  it("yields the payloads of one read as one batch, an event split across reads with the read that ends it", async () => {
    const [a, b, c] = [chunk("a"), chunk("b"), finish()];
    const text = frames(a, b) + frames(c).slice(0, 10);
    const batches: string[][] = [];
    for await (const batch of readChatStreamBatches(reads(text, frames(c).slice(10) + "data: [DONE]\n\n"), options)) batches.push(batch);
    expect(batches).toEqual([[a, b], [c]]);
  });

  it("stops at [DONE] in the middle of a read", async () => {
    const batches: string[][] = [];
    for await (const batch of readChatStreamBatches(reads(frames(chunk("a"), finish()) + "data: [DONE]\n\n" + frames(chunk("late"))), options)) batches.push(batch);
    expect(batches).toEqual([[chunk("a"), finish()]]);
  });

  it("yields the chunks before an error payload of the same read, then throws", async () => {
    const seen: string[][] = [];
    const run = async () => {
      for await (const batch of readChatStreamBatches(reads(frames(chunk("a"), chunk("b"), '{"error":{"message":"overloaded"}}', chunk("c"))), options)) seen.push(batch);
    };
    await expect(run()).rejects.toMatchObject({ status: 502, message: "openai: overloaded" });
    expect(seen).toEqual([[chunk("a"), chunk("b")]]);
  });
});
