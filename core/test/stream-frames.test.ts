import { describe, expect, it } from "vitest";
import { chatStreamFrames, type StreamFrameOptions } from "../src/chat/stream-frames.ts";
import type { ChatStreamItem, Usage } from "../src/types/chat.ts";

const chunk = (content: string) =>
  `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","service_tier":"default","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":null}],"usage":null}`;
const usageChunk = '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","service_tier":"default","choices":[],"usage":{"prompt_tokens":2,"completion_tokens":3,"total_tokens":5}}';

async function* from<T>(items: T[], failAfter?: boolean): AsyncGenerator<T> {
  yield* items;
  if (failAfter) throw new Error("broke off");
}

/** Every frame the client would get, and what the callbacks saw. */
async function run<T extends ChatStreamItem | readonly ChatStreamItem[]>(items: T[], options: Partial<StreamFrameOptions> = {}, failAfter = false) {
  const usage: Usage[] = [];
  const collected: ChatStreamItem[] = [];
  const rest = from(items, failAfter);
  const first = await rest.next();
  const frames: string[] = [];
  const all = { includeUsage: false, keepServiceTier: false, clientGone: () => false, onUsage: (u: Usage) => usage.push(u), collect: (i: ChatStreamItem) => collected.push(i), ...options };
  for await (const frame of chatStreamFrames(first, rest, all)) frames.push(frame);
  return { frames, text: frames.join(""), usage, collected };
}

describe("chatStreamFrames", () => {
  const items = [chunk("a"), chunk("b"), usageChunk];

  it.each([false, true])("frames a batch (one upstream read) as one string, as its items one by one (include_usage %s)", async (includeUsage) => {
    const single = await run(items, { includeUsage });
    const batched = await run([items.slice(0, 2), items.slice(2)], { includeUsage });
    expect(batched.text).toBe(single.text);
    expect(batched.frames).toHaveLength(includeUsage ? 3 : 2);
    expect(batched.frames[0]).toBe('data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}],"usage":null}\n\n' + `data: ${chunk("b").replace('"service_tier":"default",', "")}\n\n`);
    expect(batched.text.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(batched.text.includes('"choices":[]')).toBe(includeUsage);
    expect(batched.usage).toEqual([{ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 }]);
    expect(batched.collected).toEqual(items);
  });

  it("keeps service_tier when the request set it", async () => {
    const { text } = await run([[chunk("a")]], { keepServiceTier: true });
    expect(text).toBe(`data: ${chunk("a")}\n\ndata: [DONE]\n\n`);
  });

  it("ends a batched stream that fails with the frames so far and one error event, no [DONE]", async () => {
    const { frames } = await run([[chunk("a"), chunk("b")]], {}, true);
    expect(frames).toHaveLength(2);
    expect(frames[1]).toMatch(/^data: \{"error":/);
    expect(frames.join("")).not.toContain("[DONE]");
  });
});
