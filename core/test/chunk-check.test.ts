/**
 * `ChunkScanner` reads chunks from their text, guessing where each key is from the previous event:
 * whatever the layouts of a stream's events, it must agree with `JSON.parse` on what is a chunk,
 * which chunks have empty choices, and how many finish reasons came.
 */
import { describe, expect, it } from "vitest";
import { ChunkScanner, createChunkCheck } from "../src/chat/chunk-check.ts";

/** The truth about one event's data, from parsing it. */
function parsed(data: string): { chunk: boolean; empty: boolean; finishes: number } {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return { chunk: false, empty: false, finishes: 0 };
  }
  const choices = (value as { choices?: unknown } | null)?.choices;
  if (typeof value !== "object" || value === null || !Array.isArray(choices)) return { chunk: false, empty: false, finishes: 0 };
  return { chunk: true, empty: choices.length === 0, finishes: choices.filter((c: { finish_reason?: unknown }) => typeof c?.finish_reason === "string" && c.finish_reason !== "").length };
}

/** Scans `events` as one stream, each inside a block with other text around it, and checks each against the truth. */
function expectAgrees(events: string[], choices = 1): ChunkScanner {
  const scanner = new ChunkScanner(choices);
  let finishes = 0;
  for (const data of events) {
    const block = `data: ${data}\n\ndata: {"choices":[{"finish_reason":"stop"}]}\n\n`;
    const truth = parsed(data);
    expect(scanner.scan(block, 6, 6 + data.length), data).toBe(truth.chunk);
    if (!truth.chunk) continue;
    expect(scanner.emptyChoices, data).toBe(truth.empty);
    finishes += truth.finishes;
    expect(scanner.finishes, data).toBe(finishes);
  }
  return scanner;
}

const openai = (delta: object, finish: string | null = null, extra: object = {}) =>
  JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", service_tier: "default", system_fingerprint: "fp", choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null, ...extra });

describe("ChunkScanner", () => {
  it("reads an OpenAI stream: role, content, finish, usage", () => {
    const usage = JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } });
    const scanner = expectAgrees([openai({ role: "assistant", content: "" }), openai({ content: "Hel" }), openai({ content: 'lo "finish_reason":"stop" {}' }), openai({}, "stop"), usage]);
    expect(scanner.finished).toBe(true);
  });

  it("agrees with JSON.parse whatever the layout of each event", () => {
    const events = [
      openai({ content: "a" }),
      // Python's json.dumps: blanks after colons and commas.
      '{"id": "c", "choices": [{"index": 0, "delta": {"content": "b"}, "finish_reason": null}]}',
      '{"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}',
      // Keys in another order, finish_reason first, choices last, blanks around the colon.
      '{"choices" : [ { "finish_reason" : null , "delta":{"content":"c"},"index":0 } ] }',
      // A longer id moves every key: the guess from the previous event misses.
      openai({ content: "d" }, null, { id: "chatcmpl-a-much-longer-identifier" }),
      // logprobs after finish_reason, with a token that is the text "finish_reason".
      '{"choices":[{"index":0,"delta":{"content":"e"},"finish_reason":null,"logprobs":{"content":[{"token":"finish_reason","logprob":0}]}}]}',
      '{"choices":[{"index":0,"delta":{"content":"f"},"logprobs":{"content":[{"token":"finish_reason","logprob":0}]},"finish_reason":"stop"}]}',
      // No finish_reason key at all, an empty string, a native reason.
      '{"choices":[{"index":0,"delta":{"content":"g"}}]}',
      '{"choices":[{"index":0,"delta":{},"finish_reason":""}]}',
      '{"choices":[{"index":0,"delta":{},"native_finish_reason":"end_turn","finish_reason":null}]}',
      // Blank around the object, an empty choices list with blanks in it.
      ' {"choices":[]} ',
      '{"choices":[ ],"usage":{"prompt_tokens":1}}',
      // Not chunks.
      "null",
      "not json",
      "[]",
      '"choices"',
      '{"foo":1}',
      '{"choices":5}',
      '{"choices":null}',
      '{"id":"c","choices":[{"index":0,"delta":{"content":"cut',
      '{"text":"\\"choices\\":[]"}',
    ];
    // Twice over, so every event is also read after every other layout's guess.
    expectAgrees([...events, ...events.reverse()]);
  });

  it("takes an object cut short inside that still ends in `}` for a chunk: the text test does not balance brackets", () => {
    // Parsing each event would cost more than the relay's whole work per chunk; `store: true` parses, and refuses it.
    const scanner = new ChunkScanner();
    expect(scanner.scan('{"choices":[{"index":0,"delta":{}}')).toBe(true);
  });

  it("counts every finish reason of a chunk with several choices when the request has n > 1", () => {
    const two = '{"choices":[{"index":0,"delta":{},"finish_reason":"stop"},{"index":1,"delta":{},"finish_reason":"length"}]}';
    const scanner = expectAgrees(['{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null},{"index":1,"delta":{"content":"b"},"finish_reason":null}]}', two], 2);
    expect(scanner.finished).toBe(true);
  });
});

describe("createChunkCheck", () => {
  it("says when the usage chunk completes the stream, and refuses an unfinished end", () => {
    const check = createChunkCheck("p");
    expect(check.event(openai({ content: "a" }))).toBe(false);
    expect(() => check.end()).toThrow(expect.objectContaining({ status: 502, message: "p: the upstream stream ended before the answer was complete (no finish_reason)." }));
    expect(check.event('{"choices":[],"usage":{"total_tokens":1}}')).toBe(false);
    expect(check.event(openai({}, "stop"))).toBe(false);
    expect(check.event('{"choices":[],"usage":null}')).toBe(false);
    expect(check.event('{"choices":[],"usage":{"total_tokens":1}}')).toBe(true);
    expect(() => check.end()).not.toThrow();
    expect(() => check.event("null")).toThrow(expect.objectContaining({ status: 502, message: "p: the upstream sent a stream event that is not a chat.completion.chunk." }));
  });
});
