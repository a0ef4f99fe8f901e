/** What commits a stream to the client: the first chunk with content. */
import { describe, expect, it } from "vitest";
import { ChunkCheck, carriesContent } from "../src/chat/chunk-check.ts";
import { untilContent, type FramesState } from "../src/chat/first-content.ts";

const frame = (delta: string, finish = "null") => `data: {"choices":[{"index":0,"delta":${delta},"finish_reason":${finish}}]}\n\n`;

describe("carriesContent", () => {
  const choice = (delta: unknown, finish_reason: unknown = null) => ({ index: 0, delta, finish_reason });

  it("is false for a role-only chunk, an empty text or an empty delta", () => {
    expect(carriesContent(choice({ role: "assistant" }))).toBe(false);
    expect(carriesContent(choice({ role: "assistant", content: "" }))).toBe(false);
    expect(carriesContent(choice({}))).toBe(false);
    expect(carriesContent(choice({ tool_calls: [] }))).toBe(false);
    expect(carriesContent({ index: 0 })).toBe(false);
  });

  it("is true for text, a refusal, reasoning, a tool call, audio or a finish reason", () => {
    expect(carriesContent(choice({ content: "Hi" }))).toBe(true);
    expect(carriesContent(choice({ refusal: "No." }))).toBe(true);
    expect(carriesContent(choice({ reasoning_content: "Hmm" }))).toBe(true);
    expect(carriesContent(choice({ reasoning: "Hmm" }))).toBe(true);
    expect(carriesContent(choice({ tool_calls: [{ index: 0 }] }))).toBe(true);
    expect(carriesContent(choice({ audio: { id: "a", data: "AAA=" } }))).toBe(true);
    expect(carriesContent(choice({}, "length"))).toBe(true);
  });

  it("is what ChunkCheck reports once, at the first chunk that has it", () => {
    let calls = 0;
    const check = new ChunkCheck({ provider: "p", includeUsage: false, keepServiceTier: false, onContent: () => calls++ });
    check.take({ choices: [choice({ role: "assistant", content: "" })] });
    expect([check.content, calls]).toEqual([false, 0]);
    check.take({ choices: [choice({ content: "Hi" })] });
    check.take({ choices: [choice({}, "stop")] });
    expect([check.content, calls]).toEqual([true, 1]);
  });
});

describe("untilContent", () => {
  it("holds the frames before the first content, then gives them all in order", async () => {
    const all = [frame('{"role":"assistant","content":""}'), frame('{"content":"Hi"}'), frame("{}", '"stop"')];
    const state = { failure: undefined as unknown, hasContent: false };
    let reads = 0;
    // The source says it has content once it made the second frame, as the chunk checks do.
    const source = (async function* () {
      for (const f of all) {
        if (++reads === 2) state.hasContent = true;
        yield f;
      }
    })();
    const it = await untilContent(source, state);
    expect(reads).toBe(2);
    const seen: string[] = [];
    for (let r = await it.next(); !r.done; r = await it.next()) seen.push(r.value);
    expect(seen).toEqual(all);
  });

  it("gives frames whose source had content as it opened unread, and still releases them when let go of unread", async () => {
    const all = [frame('{"content":"Hi"}'), frame("{}", '"stop"')];
    const state = { failure: undefined as unknown, hasContent: true };
    let reads = 0;
    let released = false;
    const source = (async function* () {
      try {
        for (const f of all) {
          reads++;
          yield f;
        }
      } finally {
        released = true;
      }
    })();
    const it = untilContent(source, state);
    // No read, and no promise, when the content is there already.
    expect(it).not.toBeInstanceOf(Promise);
    expect(reads).toBe(0);
    // Let go of before its first read (the client left): the source's finally runs all the same.
    await (it as AsyncIterator<string>).return!();
    expect(released).toBe(true);
  });

  it("gives the frames in order when read, from the first", async () => {
    const all = [frame('{"content":"Hi"}'), frame("{}", '"stop"')];
    const it = (await untilContent((async function* () { yield* all; })(), { failure: undefined, hasContent: true }));
    const seen: string[] = [];
    for (let r = await it.next(); !r.done; r = await it.next()) seen.push(r.value);
    expect(seen).toEqual(all);
  });

  it("throws the failure behind an error event that comes before any content, and sends nothing", async () => {
    const state: FramesState & { failure: unknown } = { failure: undefined, hasContent: false };
    const source = (async function* () {
      yield frame('{"role":"assistant"}');
      state.failure = new Error("upstream failed");
      yield 'data: {"error":{"message":"upstream failed"}}\n\n';
    })();
    await expect(untilContent(source, state)).rejects.toThrow("upstream failed");
  });
});

describe("content and the chunk checks", () => {
  it("counts no content of a chunk that fails its checks after its choices (a usage that is no object)", () => {
    let calls = 0;
    const check = new ChunkCheck({ provider: "p", includeUsage: false, keepServiceTier: false, onContent: () => calls++ });
    expect(() => check.take({ choices: [{ index: 0, delta: { content: "Hi" }, finish_reason: null }], usage: 5 })).toThrow();
    expect([check.content, calls]).toEqual([false, 0]);
  });
});
