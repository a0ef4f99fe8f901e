import { afterEach, describe, expect, test, vi } from "vitest";
import type { ChatCompletionChunk, FunctionTool } from "@modelmux/core";
import { call, chat, collect, request, setupEcho } from "./helpers.ts";

const lookup: FunctionTool = {
  type: "function",
  function: { name: "lookup", parameters: { type: "object", properties: { query: { type: "string" }, limit: { type: "integer" } }, required: ["query", "limit"] } },
};
const long = "The quick brown fox jumps over the lazy dog, again and again and again.";

function content(chunks: ChatCompletionChunk[], index = 0): string {
  return chunks.flatMap((c) => c.choices.filter((choice) => choice.index === index).map((choice) => choice.delta.content ?? "")).join("");
}

/** Records the timers of `ms` that the code under test starts, so a test can see they were cleared. */
function watchTimers(ms: number): unknown[] {
  const started: unknown[] = [];
  const realSetTimeout = globalThis.setTimeout;
  vi.spyOn(globalThis, "setTimeout").mockImplementation(((fn: () => void, delay?: number) => {
    const handle = realSetTimeout(fn, delay);
    if (delay === ms) started.push(handle);
    return handle;
  }) as typeof setTimeout);
  vi.spyOn(globalThis, "clearTimeout");
  return started;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("streaming", () => {
  test("sends a role chunk, content in pieces, a finish chunk and a usage chunk", async () => {
    const provider = await setupEcho();
    const chunks = await collect(provider);
    const json = await chat(provider);
    const [first, ...rest] = chunks;
    expect(first?.choices).toEqual([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]);
    const contentChunks = rest.filter((c) => c.choices[0]?.delta.content);
    expect(contentChunks.length).toBeGreaterThanOrEqual(2);
    for (const c of contentChunks) expect(Array.from(c.choices[0]!.delta.content!).length).toBeLessThanOrEqual(8);
    expect(content(chunks)).toBe(json.choices[0]?.message.content);
    expect(chunks.at(-2)?.choices).toEqual([{ index: 0, delta: {}, finish_reason: "stop" }]);
    expect(chunks.at(-1)?.choices).toEqual([]);
    expect(chunks.at(-1)?.usage).toEqual(json.usage);
    expect(new Set(chunks.map((c) => `${c.id} ${c.created} ${c.model} ${c.object}`)).size).toBe(1);
    expect(chunks[0]?.id).toMatch(/^chatcmpl-echo-/);
  });

  test("chunk_size sets the piece size", async () => {
    const chunks = await collect(await setupEcho({ chunk_size: 5 }), { messages: [{ role: "user", content: "abcdefghijkl" }] });
    expect(chunks.filter((c) => c.choices[0]?.delta.content).map((c) => c.choices[0]?.delta.content)).toEqual(["abcde", "fghij", "kl"]);
  });

  test("a cut reply streams the same text and finish reason as the JSON reply", async () => {
    const provider = await setupEcho({ chunk_size: 3 });
    const fields = { messages: [{ role: "user" as const, content: long }], max_completion_tokens: 4, n: 2, service_tier: "default" };
    const chunks = await collect(provider, fields);
    const json = await chat(provider, fields);
    for (const index of [0, 1]) expect(content(chunks, index)).toBe(json.choices[index]?.message.content);
    expect(chunks.flatMap((c) => c.choices.map((choice) => choice.finish_reason)).filter(Boolean)).toEqual(["length", "length"]);
    expect(chunks.every((c) => c.service_tier === "default")).toBe(true);
    expect(chunks.at(-1)?.usage).toEqual(json.usage);
  });

  test("tool-call deltas reassemble to the JSON reply's tool call", async () => {
    const provider = await setupEcho({ chunk_size: 4 });
    const fields = { messages: [{ role: "user" as const, content: "lookup cats" }], tools: [lookup] };
    const chunks = await collect(provider, fields);
    const expected = (await chat(provider, fields)).choices[0]!.message.tool_calls![0]!;
    const deltas = chunks.flatMap((c) => c.choices.flatMap((choice) => choice.delta.tool_calls ?? []));
    expect(deltas[0]).toEqual({ index: 0, id: expected.id, type: "function", function: { name: "lookup", arguments: "" } });
    expect(deltas.length).toBeGreaterThan(2);
    expect(deltas.map((d) => d.function?.arguments ?? "").join("")).toBe(expected.function.arguments);
    expect(JSON.parse(expected.function.arguments)).toEqual({ query: "lookup cats", limit: 0 });
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe("tool_calls");
  });

  test("delay_ms pauses between chunks", async () => {
    const started = Date.now();
    const chunks = await collect(await setupEcho({ delay_ms: 20, chunk_size: 8 }), { messages: [{ role: "user", content: "0123456789abcdef" }] });
    expect(chunks).toHaveLength(5); // role, 2 content, finish, usage
    expect(Date.now() - started).toBeGreaterThanOrEqual(4 * 20 - 5);
  });

  test("an abort ends a delayed stream at once and leaves no timer behind", async () => {
    const provider = await setupEcho({ delay_ms: 1_000, chunk_size: 4 });
    const timers = watchTimers(1_000);
    const controller = new AbortController();
    const stream = await provider.chatStream!(request({ messages: [{ role: "user", content: long }], stream: true }), call(controller.signal));
    const received: unknown[] = [];
    const started = Date.now();
    const consume = (async () => {
      for await (const chunk of stream) {
        received.push(chunk);
        if (received.length === 1) setTimeout(() => controller.abort(), 50);
      }
    })();
    await expect(consume).rejects.toMatchObject({ name: "AbortError" });
    expect(Date.now() - started).toBeLessThan(500);
    expect(received).toHaveLength(1);
    expect(timers).toHaveLength(1);
    expect(clearTimeout).toHaveBeenCalledWith(timers[0]);
  });

  test("an already aborted call fails before the first chunk", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect((await setupEcho()).chatStream!(request({ stream: true }), call(controller.signal))).rejects.toMatchObject({ name: "AbortError" });
  });
});
