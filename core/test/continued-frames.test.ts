import { describe, expect, it } from "vitest";
import { ContinuedFrames } from "../src/chat/continued-frames.ts";
import type { SentSoFar } from "../src/chat/stream-attempt.ts";
import { addUsage, Transcript } from "../src/chat/transcript.ts";
import { sseData } from "../src/sse/write.ts";
import type { ChatCompletionChunk } from "../src/types/chat.ts";

function chunk(delta: Record<string, unknown>, extra: Partial<ChatCompletionChunk> = {}, finish: string | null = null): ChatCompletionChunk {
  return { id: "chatcmpl-b", object: "chat.completion.chunk", created: 2, model: "b", choices: [{ index: 0, delta, finish_reason: finish as never }], ...extra };
}

function frame(...chunks: ChatCompletionChunk[]): string {
  return chunks.map((c) => sseData(JSON.stringify(c))).join("");
}

function parsed(text: string): ChatCompletionChunk[] {
  return text
    .split("\n\n")
    .filter(Boolean)
    .map((event) => JSON.parse(event.slice(6)) as ChatCompletionChunk);
}

/** A transcript of a stream `chatcmpl-a` whose client has `text`. */
function sentSoFar(text: string): SentSoFar {
  const transcript = new Transcript();
  transcript.add({ id: "chatcmpl-a", object: "chat.completion.chunk", created: 1, model: "a", choices: [{ index: 0, delta: { role: "assistant", content: text }, finish_reason: null }] });
  return { transcript, assembler: undefined, model: "p/a" };
}

describe("Transcript", () => {
  it("follows the text of choice 0 and the stream's names", () => {
    const t = sentSoFar("Hello");
    t.transcript!.add(chunk({ content: " world" }));
    expect(t.transcript).toMatchObject({ id: "chatcmpl-a", model: "a", created: 1, text: "Hello world", continuable: true });
  });

  it.each([
    ["a tool call", { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: "" } }] }],
    ["a refusal", { refusal: "no" }],
  ])("is not continuable after %s", (_name, delta) => {
    const t = sentSoFar("Let me check.").transcript!;
    t.add(chunk(delta));
    expect(t.continuable).toBe(false);
  });

  it("is not continuable once finished, or with whitespace only", () => {
    const done = sentSoFar("Hi").transcript!;
    done.add(chunk({}, {}, "stop"));
    expect(done.continuable).toBe(false);
    expect(sentSoFar(" \n").transcript!.continuable).toBe(false);
  });

  it("adds usages", () => {
    const a = { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 };
    const b = { prompt_tokens: 13, completion_tokens: 5, total_tokens: 18 };
    expect(addUsage(a, b)).toEqual({ prompt_tokens: 23, completion_tokens: 8, total_tokens: 31 });
    expect(addUsage(undefined, b)).toBe(b);
    expect(addUsage(a, undefined)).toBe(a);
  });
});

describe("ContinuedFrames", () => {
  it("gives each chunk the stream's id, model and created, without the role", () => {
    const sent = sentSoFar("Hello");
    const out = parsed(new ContinuedFrames(sent, "", undefined).rewrite(frame(chunk({ role: "assistant", content: " world" }), chunk({}, {}, "stop"))));
    expect(out.map((c) => [c.id, c.model, c.created])).toEqual([
      ["chatcmpl-a", "a", 1],
      ["chatcmpl-a", "a", 1],
    ]);
    expect(out[0]!.choices[0]!.delta).toEqual({ content: " world" });
    expect(sent.transcript!.text).toBe("Hello world");
  });

  it("drops a chunk that only said the role", () => {
    expect(new ContinuedFrames(sentSoFar("Hi"), "", undefined).rewrite(frame(chunk({ role: "assistant", content: "" })))).toBe("");
  });

  it("skips whitespace the client has, across deltas, once", () => {
    const rewrite = new ContinuedFrames(sentSoFar("Hello \n"), " \n", undefined);
    expect(parsed(rewrite.rewrite(frame(chunk({ content: " " }))))).toEqual([]);
    expect(parsed(rewrite.rewrite(frame(chunk({ content: "\nworld " }))))[0]!.choices[0]!.delta.content).toBe("world ");
    expect(parsed(rewrite.rewrite(frame(chunk({ content: " again" }))))[0]!.choices[0]!.delta.content).toBe(" again");
  });

  it("keeps the continuation's text when it does not repeat the whitespace", () => {
    const rewrite = new ContinuedFrames(sentSoFar("Hello "), " ", undefined);
    expect(parsed(rewrite.rewrite(frame(chunk({ content: "world" }))))[0]!.choices[0]!.delta.content).toBe("world");
  });

  it("adds the broken attempt's usage to the usage chunk", () => {
    const before = { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 };
    const usage = { prompt_tokens: 13, completion_tokens: 5, total_tokens: 18 };
    const out = parsed(new ContinuedFrames(sentSoFar("Hi"), "", before).rewrite(frame({ ...chunk({}), choices: [], usage })));
    expect(out[0]!.usage).toEqual({ prompt_tokens: 23, completion_tokens: 8, total_tokens: 31 });
  });

  it("passes [DONE] and an error event as they are", () => {
    const rewrite = new ContinuedFrames(sentSoFar("Hi"), "", undefined);
    expect(rewrite.rewrite("data: [DONE]\n\n")).toBe("data: [DONE]\n\n");
    const error = sseData(JSON.stringify({ error: { message: "x", type: "api_error", code: null, param: null } }));
    expect(rewrite.rewrite(error)).toBe(error);
  });
});
