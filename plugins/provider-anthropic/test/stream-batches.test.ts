/**
 * `readMessageStreamBatches` against the event-by-event translation: whatever way the body is cut
 * into reads, the batches hold the same chunks, serialised, as `createStreamTranslator().push`
 * makes of the parsed events.
 */
import { describe, expect, it } from "vitest";
import { replyBody, type ChatStreamItem, type HttpBody } from "@modelmux/core";
import { rawJsonOf } from "@modelmux/core/testing";
import { createStreamTranslator, readMessageStreamBatches } from "../src/stream.ts";

const OPTIONS = { provider: "anthropic", model: "claude-sonnet-4-5", timeoutMs: 1000 };

type Event = { type: string } & Record<string, unknown>;

/** An event's data: its JSON, or the text given (for escapes `JSON.stringify` does not write). */
const dataOf = (event: Event | string) => (typeof event === "string" ? event : JSON.stringify(event));
const sse = (events: readonly (Event | string)[]) => events.map((e) => `event: ${(JSON.parse(dataOf(e)) as Event).type}\ndata: ${dataOf(e)}\n\n`).join("");
const start = (id: string): Event => ({
  type: "message_start",
  message: { id, type: "message", role: "assistant", model: "claude-sonnet-4-5-20250929", content: [], stop_reason: null, usage: { input_tokens: 24, output_tokens: 1 } },
});
const text = (t: string, index = 0): Event => ({ type: "content_block_delta", index, delta: { type: "text_delta", text: t } });
const args = (partial: string, index: number): Event => ({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: partial } });
const stop = (reason: string, output: number): Event[] => [
  { type: "message_delta", delta: { stop_reason: reason, stop_sequence: null }, usage: { output_tokens: output } },
  { type: "message_stop" },
];

/** The bench's reply (`bench/proxy/replies.ts`): 20 text deltas, with a ping. */
const BENCH = [
  start("msg_bench"),
  { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
  { type: "ping" },
  ...Array.from({ length: 20 }, (_, i) => text(i === 0 ? "Routers" : ` token${i}`)),
  { type: "content_block_stop", index: 0 },
  ...stop("end_turn", 20),
];

/** Text that needs escapes and multi-byte characters (split across reads below), and an empty delta. */
const TRICKY_TEXT: (Event | string)[] = [
  start("msg_text"),
  { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
  text('quote " backslash \\ tab \t newline \n'),
  text("é 🙂 \u2028 \u007f \u0001"),
  text(""),
  '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"caf\\u00e9 a\\/b \\ud83d"}}',
  text("plain"),
  ...stop("max_tokens", 5),
];

/** Text, then two tool calls: one streams its input in fragments, one has none. */
const TOOLS = [
  start("msg_tools"),
  { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
  { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Hmm." } },
  { type: "content_block_stop", index: 0 },
  { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
  text("Let me check.", 1),
  { type: "content_block_stop", index: 1 },
  { type: "content_block_start", index: 2, content_block: { type: "tool_use", id: "toolu_1", name: "get_weather", input: {} } },
  args("", 2),
  args('{"city": "Pa', 2),
  args('ris \\"FR\\"", "days": [1, 2]}', 2),
  { type: "content_block_stop", index: 2 },
  { type: "content_block_start", index: 3, content_block: { type: "tool_use", id: "toolu_2", name: "now", input: {} } },
  { type: "content_block_stop", index: 3 },
  ...stop("tool_use", 42),
];

/** `created` is the second the translator was made: equal across the readers, but not by construction. */
const sameSecond = (json: string) => json.replace(/"created":\d+/, '"created":0');
/** The chunk object's JSON. */
const serialised = (item: ChatStreamItem) => sameSecond(typeof item === "string" ? item : JSON.stringify(item));
/** What the client gets of an item: the JSON text it came with (`withRawJson`), else its JSON. */
const sent = (item: ChatStreamItem) => sameSecond((typeof item === "object" && rawJsonOf(item)) || serialised(item));

/** The event-by-event translation of the parsed events: what every reader must give. */
function reference(events: readonly (Event | string)[]): string[] {
  const translator = createStreamTranslator(OPTIONS);
  return events.flatMap((event) => translator.push(JSON.parse(dataOf(event)))).map(serialised);
}

/** A body of the given reads. */
const reads = (...pieces: Buffer[]): HttpBody => replyBody(pieces);

async function batchesOf(body: HttpBody): Promise<ChatStreamItem[][]> {
  const batches: ChatStreamItem[][] = [];
  for await (const batch of readMessageStreamBatches(body, OPTIONS)) batches.push(batch);
  return batches;
}

describe("readMessageStreamBatches", () => {
  it.each([
    ["the bench's reply", BENCH],
    ["text with escapes and multi-byte characters", TRICKY_TEXT],
    ["a reply with tool calls", TOOLS],
  ])("gives the chunks of the event-by-event translation for %s, however the body is cut in two reads", async (_, events) => {
    const bytes = Buffer.from(sse(events));
    const expected = reference(events);
    const mismatches: number[] = [];
    for (let cut = 0; cut <= bytes.length; cut++) {
      const body = () => reads(bytes.subarray(0, cut), bytes.subarray(cut));
      const batches = await batchesOf(body());
      // The objects (what the core checks and stores) and the texts (what the client reads) both.
      const same = (got: ChatStreamItem[]) => JSON.stringify(got.map(serialised)) === JSON.stringify(expected) && JSON.stringify(got.map(sent)) === JSON.stringify(expected);
      if (batches.some((batch) => batch.length === 0) || !same(batches.flat())) mismatches.push(cut);
    }
    expect(mismatches).toEqual([]);
  });

  it("gives one batch per read: a whole reply read at once is one batch", async () => {
    const batches = await batchesOf(reads(Buffer.from(sse(BENCH))));
    expect(batches).toHaveLength(1);
    expect(batches[0]).toHaveLength(reference(BENCH).length);
  });

  it("sends text and argument deltas with their JSON text, and literals with other escapes as plain objects that read the same", async () => {
    const unusual = `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"caf\\u00e9 a\\/b"}}\n\n`;
    const body = `${sse([...TRICKY_TEXT.slice(0, 2), text("plain")])}${unusual}${sse(stop("end_turn", 2))}`;
    const items = (await batchesOf(reads(Buffer.from(body)))).flat();
    expect(items.map((item) => typeof item)).toEqual(["object", "object", "object", "object", "object"]);
    expect(items.map((item) => typeof item === "object" && rawJsonOf(item) !== undefined)).toEqual([false, true, false, false, false]);
    expect(items[1]).toMatchObject({ choices: [{ delta: { content: "plain" } }] });
    expect(rawJsonOf(items[1] as object)).toBe(JSON.stringify(items[1]));
    expect(items[2]).toMatchObject({ choices: [{ delta: { content: "café a/b" } }] });
  });

  it("yields the chunks before an error event in the same read, then throws the mapped error", async () => {
    const events = [...BENCH.slice(0, 5), { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }, ...BENCH.slice(5)];
    const batches: ChatStreamItem[][] = [];
    const run = async () => {
      for await (const batch of readMessageStreamBatches(reads(Buffer.from(sse(events))), OPTIONS)) batches.push(batch);
    };
    await expect(run()).rejects.toMatchObject({ status: 502, code: "upstream_error", message: "anthropic: Overloaded (status 529)" });
    expect(batches.map((batch) => batch.map(serialised))).toEqual([reference(BENCH.slice(0, 5))]);
  });

  it("yields the chunks before an event that is not JSON in the same read, then throws 502", async () => {
    const body = `${sse(BENCH.slice(0, 5))}event: content_block_delta\ndata: {oops\n\n${sse(BENCH.slice(5))}`;
    const batches: ChatStreamItem[][] = [];
    const run = async () => {
      for await (const batch of readMessageStreamBatches(reads(Buffer.from(body)), OPTIONS)) batches.push(batch);
    };
    await expect(run()).rejects.toMatchObject({ status: 502, message: "anthropic: a stream event is not valid JSON." });
    expect(batches).toHaveLength(1);
    expect(batches[0]).toHaveLength(reference(BENCH.slice(0, 5)).length);
  });

  it("stops at message_stop, ignoring what follows in the same read, and throws 502 for a reply cut short", async () => {
    const after = sse([text("after the end")]);
    const batches = await batchesOf(reads(Buffer.from(sse(BENCH) + after)));
    expect(JSON.stringify(batches)).not.toContain("after the end");
    await expect(batchesOf(reads(Buffer.from(sse(BENCH.slice(0, -2)))))).rejects.toMatchObject({ status: 502, message: "anthropic: the stream ended before message_stop." });
  });

  it("takes a body that ends after the stop reason, without message_stop, as whole: the usage chunk closes it", async () => {
    const batches = await batchesOf(reads(Buffer.from(sse(BENCH.slice(0, -1)))));
    expect(batches.flat().map(serialised)).toEqual(reference(BENCH));
    expect(batches.at(-1)!.map(serialised)).toEqual(reference(BENCH).slice(-1));
  });
});
