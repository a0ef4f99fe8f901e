/**
 * `ChunkCheck` reads each parsed event of a stream: what is a chunk, which choices have finished
 * (each index once, within the request's `n`), the usage and when it completes the stream, and
 * whether `service_tier` is to be removed.
 */
import { describe, expect, it } from "vitest";
import { choiceCount, ChunkCheck, DROP, mayBeError, parseEventData, RELAY, RELAY_WITHOUT_TIER, type ChunkCheckOptions } from "../src/chat/chunk-check.ts";
import type { ChatCompletionChunk, Usage } from "../src/types/chat.ts";

const UNREADABLE = { status: 502, code: "upstream_error", message: "p: the upstream sent a stream event that is not a chat.completion.chunk." };

const openai = (delta: object, finish: string | null = null, extra: object = {}) =>
  JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", service_tier: "default", system_fingerprint: "fp", choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null, ...extra });
const usageChunk = '{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}';

function check(options: Partial<ChunkCheckOptions> = {}) {
  const usage: Usage[] = [];
  const collected: ChatCompletionChunk[] = [];
  const chunks = new ChunkCheck({ provider: "p", includeUsage: false, keepServiceTier: true, onUsage: (u) => usage.push(u), collect: (c) => collected.push(c), ...options });
  return { chunks, usage, collected, take: (data: string) => chunks.take(parseEventData(data)) };
}

describe("ChunkCheck", () => {
  it("reads an OpenAI stream: role, content, finish, usage", () => {
    const { chunks, usage, collected, take } = check();
    expect(take(openai({ role: "assistant", content: "" }))).toBe(RELAY);
    expect(take(openai({ content: 'lo "finish_reason":"stop" {}' }))).toBe(RELAY);
    expect(chunks.finished).toBe(false);
    expect(() => chunks.end()).toThrow(expect.objectContaining({ status: 502, message: "p: the upstream stream ended before the answer was complete (no finish_reason)." }));
    expect(take(openai({}, "stop"))).toBe(RELAY);
    expect(chunks.finished).toBe(true);
    expect(chunks.complete).toBe(false);
    expect(take(usageChunk)).toBe(DROP);
    expect(chunks.complete).toBe(true);
    expect(usage).toEqual([{ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 }]);
    expect(collected).toHaveLength(4);
    expect(() => chunks.end()).not.toThrow();
  });

  it.each([
    "not json",
    "null",
    "[]",
    '"choices"',
    "5",
    '{"foo":1}',
    '{"choices":5}',
    '{"choices":null}',
    '{"foo":{"choices":[]}}',
    '{"choices":[}',
    '{"id":"c","choices":[{"index":0,"delta":{"content":"cut',
    '{"id":"x","choices":[{"index":0,"delta":{"content":"hi"}}',
    '{"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"stop"}',
    '{"text":"\\"choices\\":[]"}',
    '{"choices":[1]}',
    '{"choices":[null]}',
    '{"choices":[{"index":"0","delta":{}}]}',
    '{"choices":[{"index":-1,"delta":{}}]}',
    '{"choices":[{"index":0.5,"delta":{}}]}',
    '{"choices":[{"index":1,"delta":{}}]}',
    '{"choices":[{"index":4294967295,"delta":{}}]}',
    '{"choices":[],"usage":5}',
    '{"choices":[],"usage":[1]}',
  ])("refuses %s, and counts nothing of it", (data) => {
    const { chunks, collected, take } = check();
    expect(() => take(data)).toThrow(expect.objectContaining(UNREADABLE));
    expect(chunks.finishes).toBe(0);
    expect(collected).toEqual([]);
  });

  it("takes valid chunks whatever their layout, blanks and key order", () => {
    const { chunks, take } = check({ choices: 2 });
    for (const data of [
      '{"id": "c", "choices": [{"index": 0, "delta": {"content": "b"}, "finish_reason": null}]}',
      ' {"choices" : [ { "finish_reason" : null , "delta":{"content":"c"},"index":1 } ] } ',
      '{"choices":[{"index":0,"delta":{},"finish_reason":""}]}',
      '{"choices":[]}',
      '{"choices":[],"usage":null}',
      '{"choices":[{"index":0,"delta":{},"native_finish_reason":"end_turn","finish_reason":null}]}',
    ]) {
      expect(take(data)).toBe(RELAY);
    }
    expect(chunks.finishes).toBe(0);
  });

  it("counts a finish reason once per choice index, each within n", () => {
    const { chunks, take } = check({ choices: 2 });
    take('{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}');
    take('{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}');
    expect(chunks.finishes).toBe(1);
    expect(chunks.finished).toBe(false);
    expect(() => chunks.end()).toThrow(expect.objectContaining({ message: "p: the upstream stream ended before the answer was complete (finish_reason for 1 of 2 choices)." }));
    take('{"choices":[{"index":1,"delta":{},"finish_reason":"length"},{"index":0,"delta":{},"finish_reason":"stop"}]}');
    expect(chunks.finishes).toBe(2);
    expect(chunks.finished).toBe(true);
  });

  it("takes a choice without an index as choice 0 when the request has one choice, and refuses it with n > 1", () => {
    const one = check();
    one.take('{"choices":[{"delta":{"content":"hi"},"finish_reason":null}]}');
    one.take('{"choices":[{"delta":{},"finish_reason":"stop"}]}');
    expect(one.chunks.finished).toBe(true);
    expect(one.collected).toHaveLength(2);
    const two = check({ choices: 2 });
    expect(() => two.take('{"choices":[{"delta":{},"finish_reason":"stop"}]}')).toThrow(expect.objectContaining(UNREADABLE));
  });

  it("reads data nested past maxDepth as unreadable only when a depth is given (a stream kept for store: true)", () => {
    const deep = `{"choices":[],"usage":{"a":${"[".repeat(300)}${"]".repeat(300)}}}`;
    expect(parseEventData(deep)).toBeTypeOf("object");
    expect(parseEventData(deep, 256)).toBeUndefined();
    expect(parseEventData(openai({ content: "x" }), 256)).toBeTypeOf("object");
  });

  it("keeps the usage chunk for a client that asked for it, and completes the stream with a usage that follows the last finish reason", () => {
    const { chunks, usage, take } = check({ includeUsage: true });
    expect(take(usageChunk)).toBe(RELAY);
    expect(chunks.complete).toBe(false);
    // A usage on the chunk that finishes the last choice (as some servers send it) completes the stream too.
    expect(take(openai({}, "stop", { usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }))).toBe(RELAY);
    expect(chunks.complete).toBe(true);
    expect(usage).toHaveLength(2);
  });

  it("says when a chunk's service_tier is to be removed", () => {
    const { take } = check({ keepServiceTier: false });
    expect(take(openai({ content: "a" }))).toBe(RELAY_WITHOUT_TIER);
    expect(take('{"choices":[],"service_tier":null}')).toBe(RELAY_WITHOUT_TIER);
    expect(take('{"choices":[]}')).toBe(RELAY);
    expect(check({ keepServiceTier: true }).take(openai({ content: "a" }))).toBe(RELAY);
  });
});

describe("choiceCount, mayBeError", () => {
  it("counts one choice for n absent, null or 0", () => {
    expect([choiceCount({}), choiceCount({ n: null }), choiceCount({ n: 0 }), choiceCount({ n: 1 }), choiceCount({ n: 3 })]).toEqual([1, 1, 1, 1, 3]);
  });

  it("shows the provider's errorOf what is not a chunk and a chunk with an error key, not an ordinary chunk", () => {
    expect([undefined, null, 5, "x", [], { error: {} }, { object: "error" }, { choices: [], error: { message: "x" } }].map(mayBeError)).toEqual([true, true, true, true, true, true, true, true]);
    expect(mayBeError(JSON.parse(openai({ content: "error" })))).toBe(false);
  });
});
