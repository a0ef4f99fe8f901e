import { describe, expect, it } from "vitest";
import { createCompletionAssembler } from "../src/chat/assemble-completion.ts";
import { rawJsonOf, withRawJson } from "../src/chat/raw-json.ts";
import { openChatStreamFrames, type StreamFrameOptions } from "../src/chat/stream-frames.ts";
import { ModelmuxError, upstreamError } from "../src/errors.ts";
import { toBodyReadError } from "../src/upstream/client.ts";
import type { ChatCompletionChunk, ChatStreamItem, Usage } from "../src/types/chat.ts";

const chunk = (content: string) =>
  `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","service_tier":"default","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":null}],"usage":null}`;
const usageChunk = '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","service_tier":"default","choices":[],"usage":{"prompt_tokens":2,"completion_tokens":3,"total_tokens":5}}';
const finish = (index = 0) => `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":${index},"delta":{},"finish_reason":"stop"}]}`;

async function* from<T>(items: T[], failAfter?: boolean): AsyncGenerator<T> {
  yield* items;
  if (failAfter) throw new Error("broke off");
}

/** Every frame the client would get, and what the callbacks saw. */
async function run<T extends ChatStreamItem | readonly ChatStreamItem[]>(items: T[], options: Partial<StreamFrameOptions> = {}, failAfter = false) {
  const usage: Usage[] = [];
  const collected: ChatStreamItem[] = [];
  const rest = from(items, failAfter);
  const frames: string[] = [];
  const all = { provider: "p", includeUsage: false, keepServiceTier: false, clientGone: () => false, onUsage: (u: Usage) => usage.push(u), collect: (i: ChatStreamItem) => collected.push(i), ...options };
  for await (const frame of await openChatStreamFrames(rest, all)) frames.push(frame);
  return { frames, text: frames.join(""), usage, collected };
}

describe("chatStreamFrames", () => {
  const items = [chunk("a"), chunk("b"), finish(), usageChunk];

  it.each([false, true])("frames a batch (one upstream read) as one string, as its items one by one (include_usage %s)", async (includeUsage) => {
    const single = await run(items, { includeUsage });
    const batched = await run([items.slice(0, 2), items.slice(2)], { includeUsage });
    expect(batched.text).toBe(single.text);
    expect(batched.frames).toHaveLength(3);
    expect(batched.frames[0]).toBe('data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}],"usage":null}\n\n' + `data: ${chunk("b").replace('"service_tier":"default",', "")}\n\n`);
    expect(batched.text.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(batched.text.includes('"choices":[]')).toBe(includeUsage);
    expect(batched.usage).toEqual([{ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 }]);
    expect(batched.collected).toEqual(items.map((item) => JSON.parse(item)));
  });

  it("keeps service_tier when the request set it", async () => {
    const { text } = await run([[chunk("a"), finish()]], { keepServiceTier: true });
    expect(text).toBe(`data: ${chunk("a")}\n\ndata: ${finish()}\n\ndata: [DONE]\n\n`);
  });

  it("ends a batched stream that fails with the frames so far and one error event, no [DONE]", async () => {
    const { frames } = await run([[chunk("a"), chunk("b")]], {}, true);
    expect(frames).toHaveLength(2);
    expect(frames[1]).toMatch(/^data: \{"error":/);
    expect(frames.join("")).not.toContain("[DONE]");
  });
});

describe("openChatStreamFrames: a stream must be whole", () => {
  const object = (content: string, finish_reason: ChatCompletionChunk["choices"][number]["finish_reason"] = null, index = 0): ChatCompletionChunk => ({
    id: "c",
    object: "chat.completion.chunk",
    created: 1,
    model: "m",
    choices: [{ index, delta: { content }, finish_reason }],
  });
  const usageObject: ChatCompletionChunk = { id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [], usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 } };
  const notChunks: ChatStreamItem[] = ["null", "not json", '{"foo":1}', '{"choices":[{"index":0', { foo: 1 } as unknown as ChatCompletionChunk, { choices: null } as unknown as ChatCompletionChunk];
  const errorOf = (text: string) => JSON.parse(text.trimEnd().split("\n\n").at(-1)!.slice("data: ".length)) as { error: { message: string; code: string } };

  it.each(notChunks.map((item) => [JSON.stringify(item), item]))("is a 502 for %s as the first item", async (_name, item) => {
    const thrown = await run([item, finish()]).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(ModelmuxError);
    expect(thrown).toMatchObject({ status: 502, code: "upstream_error", message: "p: the upstream sent a stream event that is not a chat.completion.chunk." });
  });

  it.each(notChunks.map((item) => [JSON.stringify(item), item]))("ends with the error event, no [DONE], for %s after content (one by one and in a batch)", async (_name, item) => {
    for (const items of [[chunk("a"), item, finish()], [[chunk("a")], [item, finish()]]]) {
      const { text, collected } = await run(items as ChatStreamItem[]);
      expect(text).toContain('"a"');
      expect(text).not.toContain("[DONE]");
      expect(errorOf(text).error).toMatchObject({ code: "upstream_error", message: "p: the upstream sent a stream event that is not a chat.completion.chunk." });
      expect(collected).toEqual([JSON.parse(chunk("a"))]);
    }
  });

  it("ends a stream that stops before its finish_reason with the error event, and is a 502 for an empty one", async () => {
    for (const items of [[chunk("a"), usageChunk], [object("a"), usageObject], [[chunk("a"), object("b")]]]) {
      const { text } = await run(items as ChatStreamItem[]);
      expect(text).not.toContain("[DONE]");
      expect(errorOf(text).error).toEqual({ message: "p: the upstream stream ended before the answer was complete (no finish_reason).", type: "api_error", code: "upstream_error", param: null });
    }
    await expect(run([])).rejects.toMatchObject({ status: 502, code: "upstream_error" });
  });

  it("counts a finish_reason per choice of the request's n", async () => {
    const half = [object("a", null, 0), object("b", null, 1), object("", "stop", 0), usageObject];
    expect(errorOf((await run(half, { choices: 2 })).text).error.message).toBe("p: the upstream stream ended before the answer was complete (finish_reason for 1 of 2 choices).");
    const whole = [object("a", null, 0), finish(1), object("", "length", 0), usageObject];
    expect((await run(whole, { choices: 2 })).text.endsWith("data: [DONE]\n\n")).toBe(true);
  });

  it("relays the chunks of a batch before one that is not a chunk, then ends with the error event", async () => {
    for (const bad of ['{"choices":[}', '{"foo":{"choices":[]}}', '{"choices":[{"index":1,"delta":{},"finish_reason":"stop"}]}']) {
      const { frames, collected } = await run([[chunk("a"), chunk("b"), bad, finish()]]);
      expect(frames).toHaveLength(2);
      expect(frames[0]).toContain('"b"');
      expect(errorOf(frames[1]!).error.message).toBe("p: the upstream sent a stream event that is not a chat.completion.chunk.");
      expect(collected).toHaveLength(2);
    }
  });

  it("needs a finish reason for each choice index: a repeated one for choice 0 does not finish choice 1", async () => {
    const { text } = await run([object("a", null, 0), object("b", null, 1), object("", "stop", 0), object("", "stop", 0)], { choices: 2 });
    expect(text).not.toContain("[DONE]");
    expect(errorOf(text).error.message).toBe("p: the upstream stream ended before the answer was complete (finish_reason for 1 of 2 choices).");
  });

  it("ends normally when the connection breaks off after the last finish reason, not on an error event", async () => {
    const reset = toBodyReadError(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }), "p", 1000);
    async function* failing(error: unknown): AsyncGenerator<ChatStreamItem | readonly ChatStreamItem[]> {
      yield [chunk("a"), finish()];
      throw error;
    }
    const frames: string[] = [];
    for await (const frame of await openChatStreamFrames(failing(reset), { provider: "p", includeUsage: false, keepServiceTier: false, clientGone: () => false })) frames.push(frame);
    expect(frames.at(-1)).toBe("data: [DONE]\n\n");
    const reported: string[] = [];
    for await (const frame of await openChatStreamFrames(failing(upstreamError("p: overloaded")), { provider: "p", includeUsage: false, keepServiceTier: false, clientGone: () => false })) reported.push(frame);
    expect(errorOf(reported.at(-1)!).error.message).toBe("p: overloaded");
    // Before the last finish reason a broken connection is the stream's failure, as ever.
    const cut: string[] = [];
    for await (const frame of await openChatStreamFrames(failing(reset), { provider: "p", choices: 2, includeUsage: false, keepServiceTier: false, clientGone: () => false })) cut.push(frame);
    expect(errorOf(cut.at(-1)!).error.code).toBe("upstream_error");
  });
});

describe("openChatStreamFrames: chunk objects with their JSON text (withRawJson)", () => {
  type Choice = ChatCompletionChunk["choices"][number];
  /** A chunk object, and as its text the same JSON with its keys in another order: what is sent shows which was used. */
  const raw = (choices: Choice[], extra: Partial<ChatCompletionChunk> = {}): ChatCompletionChunk => {
    const object: ChatCompletionChunk = { id: "c", object: "chat.completion.chunk", created: 1, model: "m", ...extra, choices };
    const text = `{"choices":${JSON.stringify(choices)},${JSON.stringify({ ...extra, model: "m", created: 1, object: "chat.completion.chunk", id: "c" }).slice(1)}`;
    return withRawJson(object, text);
  };
  const content = (text: string, index = 0, extra?: Partial<ChatCompletionChunk>) => raw([{ index, delta: { content: text }, finish_reason: null }], extra);
  const stop = (index = 0, extra?: Partial<ChatCompletionChunk>) => raw([{ index, delta: {}, finish_reason: "stop" }], extra);
  const usage = raw([], { usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 } });
  const framesOf = (text: string) => text.split("\n\n").filter(Boolean).map((frame) => frame.slice("data: ".length));

  it("checks the object and sends its text as it is, neither parsed nor serialised", async () => {
    const items = [content("a"), [content("b"), stop()], usage];
    const { text, usage: reported, collected } = await run(items, { includeUsage: true });
    expect(framesOf(text)).toEqual([...[items[0], ...(items[1] as ChatCompletionChunk[]), usage].map((item) => rawJsonOf(item as ChatCompletionChunk)), "[DONE]"]);
    expect(framesOf(text)[0]).toMatch(/^\{"choices":/);
    expect(reported).toEqual([{ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 }]);
    // `collect` (what `store: true` assembles) gets the objects themselves.
    expect(collected).toEqual([items[0], ...(items[1] as ChatCompletionChunk[]), usage]);
    expect(collected[0]).toBe(items[0]);
  });

  it("drops the usage chunk of a client that did not ask for it", async () => {
    const { text, usage: reported } = await run([content("a"), stop(), usage]);
    expect(framesOf(text)).toEqual([rawJsonOf(content("a")), rawJsonOf(stop()), "[DONE]"]);
    expect(reported).toHaveLength(1);
  });

  it("removes service_tier from the text when the request did not set it, and keeps it when it did", async () => {
    const tier = { service_tier: "default" };
    const items = [content("a", 0, tier), stop(0, tier)];
    const without = framesOf((await run(items)).text);
    expect(without.slice(0, 2)).toEqual(items.map((item) => rawJsonOf(item)!.replace(',"service_tier":"default"', "")));
    expect(without.join("")).not.toContain("service_tier");
    const kept = framesOf((await run(items, { keepServiceTier: true })).text);
    expect(kept.slice(0, 2)).toEqual(items.map((item) => rawJsonOf(item)));
  });

  it("is a 502 for an object that is not a chunk, whatever its text says, and ends a started stream with the error event", async () => {
    const goodText = rawJsonOf(content("a"))!;
    const shapes = [{ foo: 1 }, { choices: null }, { choices: [{ index: 1, delta: {}, finish_reason: "stop" }] }, { choices: [], usage: "lots" }, { choices: ["x"] }];
    for (const shape of shapes) {
      const item = withRawJson(shape as unknown as ChatCompletionChunk, goodText);
      await expect(run([item, stop()])).rejects.toMatchObject({ status: 502, code: "upstream_error", message: "p: the upstream sent a stream event that is not a chat.completion.chunk." });
      const { frames } = await run([[content("a"), item, stop()]]);
      expect(frames).toHaveLength(2);
      expect(frames[1]).toMatch(/^data: \{"error":\{"message":"p: the upstream sent a stream event that is not a chat.completion.chunk."/);
    }
  });

  it("counts the finish reasons of the objects, per choice of the request's n", async () => {
    const half = (await run([content("a", 0), content("b", 1), stop(0), stop(0), usage], { choices: 2 })).text;
    expect(half).not.toContain("[DONE]");
    expect(half).toContain("finish_reason for 1 of 2 choices");
    const whole = (await run([content("a", 0), content("b", 1), stop(1), stop(0), usage], { choices: 2 })).text;
    expect(whole.endsWith("data: [DONE]\n\n")).toBe(true);
  });

  it("stores what the objects say (store: true assembles them)", async () => {
    const assembler = createCompletionAssembler("p", 1 << 20);
    let stored: unknown;
    const beforeDone = async () => void (stored = assembler.completion());
    const { text } = await run([[content("Hello, "), content("world")], stop(), usage], { collect: assembler.add, beforeDone });
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(stored).toMatchObject({ id: "c", model: "m", choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "Hello, world" } }], usage: { total_tokens: 5 } });
  });

  it("serialises a chunk object without a text, as before", async () => {
    const plain: ChatCompletionChunk = { id: "c", object: "chat.completion.chunk", created: 1, model: "m", service_tier: "default", choices: [{ index: 0, delta: { content: "a" }, finish_reason: "stop" }] };
    const { service_tier: _tier, ...rest } = plain;
    expect(framesOf((await run([plain])).text)).toEqual([JSON.stringify(rest), "[DONE]"]);
    // A copy of a chunk with a text has none: it may differ from the original.
    const copy = { ...content("a"), model: "other" };
    expect(rawJsonOf(copy)).toBeUndefined();
    expect(framesOf((await run([copy, stop()])).text)[0]).toBe(JSON.stringify(copy));
  });
});
