import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { ModelmuxError, replyBody, type ChatCompletionChunk, type ChatStreamItem, type HttpBody } from "@modelmux/core";
import { rawJsonOf } from "@modelmux/core/testing";
import { createStreamTranslator, readMessageStreamBatches } from "../src/stream.ts";
import { itemsOf } from "../../../test/helpers/provider-call.ts";
import { toChatCompletion } from "../src/response.ts";

const CONTEXT = { provider: "anthropic", model: "claude-sonnet-4-5" };

/** One complete reply: text, then a tool call whose input arrives in fragments. */
const EVENTS = [
  {
    type: "message_start",
    message: { id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-5-20250929", content: [], stop_reason: null, usage: { input_tokens: 20, output_tokens: 1, cache_creation_input_tokens: 5, cache_read_input_tokens: 100 } },
  },
  { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
  { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Hmm." } },
  { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "sig" } },
  { type: "content_block_stop", index: 0 },
  { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
  { type: "ping" },
  { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "Let me " } },
  { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "check." } },
  { type: "content_block_stop", index: 1 },
  { type: "content_block_start", index: 2, content_block: { type: "tool_use", id: "toolu_1", name: "get_weather", input: {} } },
  { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: "" } },
  { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: '{"city":' } },
  { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: ' "Paris"}' } },
  { type: "content_block_stop", index: 2 },
  { type: "content_block_start", index: 3, content_block: { type: "tool_use", id: "toolu_2", name: "now", input: {} } },
  { type: "content_block_stop", index: 3 },
  { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 42 } },
  { type: "message_stop" },
];

/** The same reply as a JSON message, for the streamed-equals-JSON check. */
const JSON_REPLY = {
  id: "msg_1",
  type: "message",
  model: "claude-sonnet-4-5-20250929",
  content: [
    { type: "text", text: "Let me check." },
    { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
    { type: "tool_use", id: "toolu_2", name: "now", input: {} },
  ],
  stop_reason: "tool_use",
  usage: { input_tokens: 20, output_tokens: 42, cache_creation_input_tokens: 5, cache_read_input_tokens: 100 },
};

function translateAll(events: readonly unknown[]): ChatCompletionChunk[] {
  const translator = createStreamTranslator(CONTEXT);
  return events.flatMap((event) => translator.push(event));
}

/** Reassembles chunks the way an OpenAI client does. */
function reassemble(chunks: ChatCompletionChunk[]) {
  let content = "";
  const calls: Array<{ id?: string; name: string; arguments: string }> = [];
  for (const chunk of chunks) {
    const delta = chunk.choices[0]?.delta;
    content += delta?.content ?? "";
    for (const t of delta?.tool_calls ?? []) {
      const c = (calls[t.index] ??= { name: "", arguments: "" });
      if (t.id) c.id = t.id;
      c.name += t.function?.name ?? "";
      c.arguments += t.function?.arguments ?? "";
    }
  }
  return { content, calls };
}

const sse = (events: readonly unknown[]) => events.map((e) => `event: ${(e as { type: string }).type}\ndata: ${JSON.stringify(e)}\n\n`).join("");

/** An SSE body delivered in arbitrary pieces, to prove events are reassembled across reads. */
function body(text: string, pieceSize = 13): HttpBody {
  return replyBody((text.match(new RegExp(`[\\s\\S]{1,${pieceSize}}`, "g")) ?? []).map((p) => Buffer.from(p)));
}

/** The chunks of a stream, strings (text deltas) parsed. */
async function collect(items: AsyncIterable<ChatStreamItem>): Promise<ChatCompletionChunk[]> {
  const out: ChatCompletionChunk[] = [];
  for await (const item of items) out.push(typeof item === "string" ? (JSON.parse(item) as ChatCompletionChunk) : item);
  return out;
}

describe("createStreamTranslator", () => {
  const chunks = translateAll(EVENTS);

  it("starts with the role, from message_start", () => {
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: "assistant", content: "" });
    expect(chunks.slice(1).some((c) => c.choices[0]?.delta.role)).toBe(false);
  });

  it("puts the same id, created and model (the message's) on every chunk", () => {
    expect(new Set(chunks.map((c) => `${c.id}|${c.created}|${c.model}|${c.object}`))).toEqual(new Set([`msg_1|${chunks[0]!.created}|claude-sonnet-4-5-20250929|chat.completion.chunk`]));
  });

  it("streams text deltas as content, ignoring thinking, signature and ping", () => {
    expect(reassemble(chunks).content).toBe("Let me check.");
    expect(JSON.stringify(chunks)).not.toContain("Hmm.");
    expect(JSON.stringify(chunks)).not.toContain("sig");
  });

  it("numbers tool calls from 0 in order, id and name first, then argument fragments", () => {
    const toolDeltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(toolDeltas[0]).toEqual({ index: 0, id: "toolu_1", type: "function", function: { name: "get_weather", arguments: "" } });
    expect(toolDeltas.filter((d) => d.index === 0).map((d) => d.function?.arguments)).toEqual(["", '{"city":', ' "Paris"}']);
    // A tool that streams no input still gets arguments that parse.
    expect(toolDeltas.filter((d) => d.index === 1)).toEqual([
      { index: 1, id: "toolu_2", type: "function", function: { name: "now", arguments: "" } },
      { index: 1, function: { arguments: "{}" } },
    ]);
  });

  it("reassembles to the same text and tool calls as the JSON reply", () => {
    const json = toChatCompletion(JSON_REPLY, CONTEXT).choices[0]!.message;
    const streamed = reassemble(chunks);
    expect(streamed.content).toBe(json.content);
    expect(streamed.calls.map((c) => ({ id: c.id, name: c.name, args: JSON.parse(c.arguments) as unknown }))).toEqual(
      json.tool_calls!.map((c) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments) as unknown })),
    );
  });

  it("sends the finish reason from message_delta, with native_finish_reason", () => {
    const finish = chunks.filter((c) => c.choices[0]?.finish_reason);
    expect(finish).toHaveLength(1);
    expect(finish[0]?.choices[0]).toEqual({ index: 0, delta: {}, finish_reason: "tool_calls", native_finish_reason: "tool_use" });
  });

  it("ends with the usage chunk at message_stop: input from message_start, output from message_delta", () => {
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 125, completion_tokens: 42, total_tokens: 167, prompt_tokens_details: { cached_tokens: 100, cache_creation_tokens: 5 } },
    });
    expect(chunks.at(-1)?.usage).toEqual(toChatCompletion(JSON_REPLY, CONTEXT).usage);
  });

  it.each([
    ["end_turn", "stop"],
    ["stop_sequence", "stop"],
    ["max_tokens", "length"],
    ["refusal", "content_filter"],
  ])("maps stop_reason %s to %s", (native, finish) => {
    const out = translateAll([EVENTS[0], { type: "message_delta", delta: { stop_reason: native }, usage: { output_tokens: 1 } }, { type: "message_stop" }]);
    expect(out[1]?.choices[0]).toMatchObject({ finish_reason: finish, native_finish_reason: native });
  });

  it("takes input counts that a message_delta repeats, and keeps the rest", () => {
    const out = translateAll([EVENTS[0], { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 3, input_tokens: 30, cache_read_input_tokens: null } }, { type: "message_stop" }]);
    expect(out.at(-1)?.usage).toMatchObject({ prompt_tokens: 135, completion_tokens: 3 });
  });

  it("ignores ping, content_block_stop of text, unknown events and anything after message_stop", () => {
    const translator = createStreamTranslator(CONTEXT);
    translator.push(EVENTS[0]);
    for (const event of [{ type: "ping" }, { type: "content_block_stop", index: 0 }, { type: "brand_new_event" }, "not an object"]) expect(translator.push(event)).toEqual([]);
    expect(translator.done).toBe(false);
    expect(translator.push({ type: "message_stop" })).toHaveLength(2);
    expect(translator.done).toBe(true);
    expect(translator.push({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "late" } })).toEqual([]);
  });

  it("sends a finish chunk at message_stop if message_delta had none", () => {
    const out = translateAll([EVENTS[0], { type: "message_stop" }]);
    expect(out.map((c) => c.choices[0]?.finish_reason ?? (c.choices.length === 0 ? "usage" : null))).toEqual([null, "stop", "usage"]);
  });

  it.each([
    ["overloaded_error", 502, "upstream_error"],
    ["api_error", 502, "upstream_error"],
    ["rate_limit_error", 429, "rate_limit_exceeded"],
    ["invalid_request_error", 400, "invalid_request_error"],
  ])("throws for an error event: %s -> %i", (type, status, code) => {
    const translator = createStreamTranslator(CONTEXT);
    translator.push(EVENTS[0]);
    let error: unknown;
    try {
      translator.push({ type: "error", error: { type, message: "Overloaded" } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ModelmuxError);
    expect(error).toMatchObject({ status, code, message: expect.stringContaining("anthropic: Overloaded") });
  });
});

/** The reader's items one at a time, as the core frames them. */
const readItems = (...args: Parameters<typeof readMessageStreamBatches>) => itemsOf(readMessageStreamBatches(...args));

describe("readMessageStreamBatches, item by item", () => {
  it("reads the SSE body in pieces and yields the translated chunks, stopping after message_stop", async () => {
    const text = `${sse(EVENTS)}event: content_block_delta\ndata: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"after the end"}}\n\n`;
    const chunks = await collect(readItems(body(text), { ...CONTEXT, timeoutMs: 1000 }));
    expect(chunks).toEqual(translateAll(EVENTS).map((c) => ({ ...c, created: chunks[0]!.created })));
    expect(JSON.stringify(chunks)).not.toContain("after the end");
  });

  it("yields text and tool-argument deltas with their JSON text, byte for byte what the chunk objects serialise to", async () => {
    const long = "a text delta long enough to be copied by a parse, not sliced";
    const events = [...EVENTS.slice(0, 7), { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: 'quote " backslash \\ é 🙂 \n' } }, { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: long } }, ...EVENTS.slice(7)];
    const items: ChatStreamItem[] = [];
    for await (const item of readItems(body(sse(events)), { ...CONTEXT, timeoutMs: 1000 })) items.push(item);
    const created = (items[0] as ChatCompletionChunk).created;
    const expected = createStreamTranslator(CONTEXT);
    const objects = events.flatMap((event) => expected.push(event)).map((chunk) => ({ ...chunk, created }));
    expect(items).toEqual(objects);
    const texts = items.flatMap((item, i) => (typeof item === "object" && rawJsonOf(item) !== undefined ? [[rawJsonOf(item), JSON.stringify(item), JSON.stringify(objects[i])]] : []));
    expect(texts).toHaveLength(6); // four text deltas, two argument fragments
    for (const [text, ownJson, translated] of texts) {
      expect(text).toBe(ownJson);
      expect(text).toBe(translated);
    }
    expect(items.some((item) => typeof item === "string")).toBe(false);
  });

  it("throws 502 for a text delta whose string does not decode, like any event that is not JSON", async () => {
    const text = `${sse(EVENTS.slice(0, 7))}event: content_block_delta\ndata: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"bad \\x"}}\n\n`;
    await expect(collect(readItems(body(text), { ...CONTEXT, timeoutMs: 1000 }))).rejects.toMatchObject({ status: 502, message: "anthropic: a stream event is not valid JSON." });
  });

  it("throws 502 for an overloaded error event, after the chunks before it", async () => {
    const text = sse([EVENTS[0], EVENTS[5], EVENTS[7], { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }]);
    const seen: ChatStreamItem[] = [];
    const run = async () => {
      for await (const chunk of readItems(body(text), { ...CONTEXT, timeoutMs: 1000 })) seen.push(chunk);
    };
    await expect(run()).rejects.toMatchObject({ status: 502, code: "upstream_error", message: "anthropic: Overloaded (status 529)" });
    expect(seen).toHaveLength(2);
  });

  it("redacts the key from an error event", async () => {
    const text = sse([{ type: "error", error: { type: "authentication_error", message: "bad key sk-ant-api03-secret" } }]);
    const error = await collect(readItems(body(text), { ...CONTEXT, timeoutMs: 1000, secret: "sk-ant-api03-secret" })).catch((e: Error) => e);
    expect((error as Error).message).toBe("anthropic: bad key [redacted]");
  });

  it("throws 502 when the body ends before the stop reason", async () => {
    for (const events of [EVENTS.slice(0, 9), EVENTS.slice(0, -2)]) {
      await expect(collect(readItems(body(sse(events)), { ...CONTEXT, timeoutMs: 1000 }))).rejects.toMatchObject({
        status: 502,
        message: "anthropic: the stream ended before message_stop.",
      });
    }
  });

  it("ends a body that stops after message_delta's stop reason, without message_stop, with the usage chunk", async () => {
    const chunks = await collect(readItems(body(sse(EVENTS.slice(0, -1))), { ...CONTEXT, timeoutMs: 1000 }));
    expect(chunks).toEqual(translateAll(EVENTS).map((c) => ({ ...c, created: chunks[0]!.created })));
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: 42 } });
  });

  it("throws 502 for an event that is not JSON", async () => {
    await expect(collect(readItems(body("event: message_start\ndata: {oops\n\n"), { ...CONTEXT, timeoutMs: 1000 }))).rejects.toMatchObject({ status: 502, code: "upstream_error" });
  });

  it("throws 502 when the body breaks off", async () => {
    const broken = new Readable({ read() {} });
    broken.push(sse(EVENTS.slice(0, 1)));
    setTimeout(() => broken.destroy(Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" })), 5);
    await expect(collect(readItems(replyBody(broken), { ...CONTEXT, timeoutMs: 1000 }))).rejects.toMatchObject({ status: 502, code: "upstream_error" });
  });

  it("throws 504 when the body stalls past the timeout", async () => {
    const stalled = new Readable({ read() {} });
    stalled.push(sse(EVENTS.slice(0, 1)));
    setTimeout(() => stalled.destroy(Object.assign(new Error("Body Timeout Error"), { code: "UND_ERR_BODY_TIMEOUT" })), 5);
    await expect(collect(readItems(replyBody(stalled), { ...CONTEXT, timeoutMs: 250 }))).rejects.toMatchObject({ status: 504, code: "upstream_timeout" });
  });
});
