/**
 * How a framed stream ends and what the provider call is told (`chat/stream-frames.ts`): after the
 * last finish reason the stream waits a second at most, and a read still pending then is ended by
 * cancelling the call (`FramedCall.cancel`), not by the client's hook; the call hears of the first
 * frame to send (`FramedCall.streaming`), which ends its upstream's whole-wait deadline.
 */
import { describe, expect, it } from "vitest";
import { openChatStreamFrames } from "../src/chat/stream-frames.ts";
import type { ChatCompletionChunk, ChatStreamItem, Usage } from "../src/types/chat.ts";

const chunk = (content: string) =>
  `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":null}]}`;
const finish = (index = 0) => `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":${index},"delta":{},"finish_reason":"stop"}]}`;
const usageObject: ChatCompletionChunk = { id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [], usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 } };

/** A read that never ends. */
const NEVER = new Promise<never>(() => {});

/** Polls `condition` every 20 ms until it holds; fails after 5 s. */
async function until(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 20) {
    if (waited > 5000) throw new Error("the condition never held");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A provider call as the core gives `openChatStreamFrames` (`FramedCall`), counting what it is
 * told; `read` is an upstream read that ends, with the abort error, when the call is cancelled.
 */
function heldCall() {
  let abort!: (error: Error) => void;
  const read = new Promise<never>((_, reject) => (abort = reject));
  read.catch(() => {});
  const call = {
    cancels: 0,
    /** The frames sent by the time `streaming` was called; -1 until then. */
    streamingAt: -1,
    streaming() {
      call.streamingAt = sent;
    },
    cancel() {
      call.cancels++;
      abort(Object.assign(new Error("This operation was aborted"), { name: "AbortError" }));
    },
  };
  return { call, read };
}

/** Frames the client has had, for `heldCall`'s `streamingAt`. */
let sent = 0;

async function* from<T>(items: T[], failAfter?: boolean): AsyncGenerator<T> {
  yield* items;
  if (failAfter) throw new Error("broke off");
}

describe("openChatStreamFrames: the end of a whole answer", () => {
  it("stores nothing and sends no [DONE] when the client leaves after the last finish reason", async () => {
    let gone = false;
    let stored = 0;
    async function* leaving(): AsyncGenerator<ChatStreamItem | readonly ChatStreamItem[]> {
      yield [chunk("a"), finish()];
      gone = true;
      await NEVER;
    }
    const frames: string[] = [];
    const options = { provider: "p", includeUsage: false, keepServiceTier: false, clientGone: () => gone, beforeDone: async () => void stored++ };
    for await (const frame of await openChatStreamFrames(leaving(), options)) frames.push(frame);
    expect(frames.join("")).not.toContain("[DONE]");
    expect(stored).toBe(0);
  });

  it("ends a second after the last finish reason when nothing more comes, cancelling the call whose read is pending; the client is not gone", async () => {
    const { call, read } = heldCall();
    let released = false;
    let stored = 0;
    async function* held(): AsyncGenerator<ChatStreamItem | readonly ChatStreamItem[]> {
      try {
        yield [chunk("a"), finish()];
        // The upstream holds its connection open: the read ends only when the call is cancelled.
        yield await read;
      } finally {
        released = true;
      }
    }
    const options = { provider: "p", includeUsage: true, keepServiceTier: false, clientGone: () => false, beforeDone: async () => void stored++, call };
    const frames: string[] = [];
    for await (const frame of await openChatStreamFrames(held(), options)) frames.push(frame);
    expect(frames.at(-1)).toBe("data: [DONE]\n\n");
    expect(stored).toBe(1);
    expect(call.cancels).toBe(1);
    // The provider's iterator is let go of: its read ended with the cancel.
    await until(() => released);
  });

  it("ends a second after the last finish reason even when the provider's read never ends (a call it does not pass on)", async () => {
    async function* stuck(): AsyncGenerator<ChatStreamItem | readonly ChatStreamItem[]> {
      yield [chunk("a"), finish()];
      yield await NEVER;
    }
    const frames: string[] = [];
    for await (const frame of await openChatStreamFrames(stuck(), { provider: "p", includeUsage: false, keepServiceTier: false, clientGone: () => false })) frames.push(frame);
    expect(frames.at(-1)).toBe("data: [DONE]\n\n");
  });

  it("relays a usage chunk that comes within the second after the last finish reason, and then cancels nothing", async () => {
    const { call } = heldCall();
    let released = false;
    async function* held(): AsyncGenerator<ChatStreamItem | readonly ChatStreamItem[]> {
      try {
        yield [chunk("a"), finish()];
        await new Promise((resolve) => setTimeout(resolve, 100));
        yield usageObject;
        yield await NEVER;
      } finally {
        released = true;
      }
    }
    const usage: Usage[] = [];
    const options = { provider: "p", includeUsage: true, keepServiceTier: false, clientGone: () => false, onUsage: (u: Usage) => usage.push(u), call };
    const frames: string[] = [];
    for await (const frame of await openChatStreamFrames(held(), options)) frames.push(frame);
    expect(frames.at(-2)).toContain('"choices":[]');
    expect(frames.at(-1)).toBe("data: [DONE]\n\n");
    expect(usage).toEqual([{ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 }]);
    // Complete at the usage chunk, the iterator is not mid-read: let go of by `return()`, the call
    // left alone (its upstream ends its body by itself, and keeps its connection).
    expect(released).toBe(true);
    expect(call.cancels).toBe(0);
  });

  it("stops reading at the usage chunk that follows the last finish reason", async () => {
    let pulled = 0;
    let released = false;
    async function* endless(): AsyncGenerator<ChatStreamItem | readonly ChatStreamItem[]> {
      try {
        yield [chunk("a"), finish()];
        yield usageObject;
        for (;;) {
          pulled++;
          yield chunk("late");
        }
      } finally {
        released = true;
      }
    }
    const { call } = heldCall();
    const frames: string[] = [];
    for await (const frame of await openChatStreamFrames(endless(), { provider: "p", includeUsage: true, keepServiceTier: false, clientGone: () => false, call })) frames.push(frame);
    expect(frames.at(-2)).toContain('"choices":[]');
    expect(frames.at(-1)).toBe("data: [DONE]\n\n");
    expect(pulled).toBe(0);
    expect(released).toBe(true);
    expect(call.cancels).toBe(0);
  });
});

describe("openChatStreamFrames: the whole-wait deadline", () => {
  const usageFirst = '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":2,"completion_tokens":0,"total_tokens":2}}';

  it("tells the call once, when the first frame to send is here, after items that give none", async () => {
    const { call } = heldCall();
    sent = 0;
    let readsBefore = 0;
    async function* items(): AsyncGenerator<ChatStreamItem | readonly ChatStreamItem[]> {
      // A usage chunk the client did not ask for: dropped, no frame.
      yield [usageFirst];
      readsBefore++;
      yield usageFirst;
      readsBefore++;
      yield [chunk("a"), finish()];
    }
    const frames = await openChatStreamFrames(items(), { provider: "p", includeUsage: false, keepServiceTier: false, clientGone: () => false, call });
    // Told before `openChatStreamFrames` returns (then the client gets its headers), once.
    expect(call.streamingAt).toBe(0);
    expect(readsBefore).toBe(2);
    for await (const frame of frames) {
      sent++;
      expect(frame).not.toContain('"choices":[]');
    }
    expect(sent).toBe(2);
    expect(call.streamingAt).toBe(0);
  });

  it("does not tell the call of a stream that fails or ends before its first frame", async () => {
    for (const items of [from([usageFirst]), from([usageFirst], true), from(["not a chunk"])]) {
      const { call } = heldCall();
      await expect(openChatStreamFrames(items, { provider: "p", includeUsage: false, keepServiceTier: false, clientGone: () => false, call })).rejects.toThrow();
      expect(call.streamingAt).toBe(-1);
    }
  });
});
