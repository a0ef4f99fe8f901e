/**
 * What the router does with the upstream of a provider that hands it chunks (provider-anthropic,
 * provider-gemini: `chat/stream-frames.ts`), end to end over real ports: the official wire format
 * comes from a scripted fake (`fixtures/fake-misbehaving-upstream.ts`), the client is a raw fetch.
 *
 * - An upstream that holds its connection open once the answer is whole (Anthropic's message_delta
 *   with its stop_reason and no message_stop, Gemini's last candidate with its finishReason): the
 *   client gets its whole stream and `[DONE]` (and the answer is stored), and the router closes the
 *   upstream request itself, long before the provider's `timeout`.
 * - An upstream that sends events that give no chunk (Anthropic's `ping`, Gemini's metadata-only
 *   events), each within the `timeout` of the one before, but never an answer: a 504 once the
 *   `timeout` has passed since the request, as for an upstream that sends nothing.
 * - An Anthropic body that ends after the stop_reason without message_stop is a whole answer; one
 *   that ends before any stop_reason is not.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startMisbehavingUpstream, type MisbehavingUpstream } from "./fixtures/fake-misbehaving-upstream.ts";
import { postJson, readSse, startHarness, testConfig, TEST_KEY, type Harness } from "./helpers/harness.ts";
import { within } from "./helpers/wait.ts";

const SSE = "text/event-stream";
const ask = [{ role: "user" as const, content: "hi" }];

/** Anthropic's SSE events, as the API writes them: `event:` and `data:` with the same type. */
const anthropicEvent = (data: { type: string } & Record<string, unknown>) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
const MESSAGE_START = anthropicEvent({
  type: "message_start",
  message: { id: "msg_held", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, output_tokens: 1 } },
});
const HELLO = [
  anthropicEvent({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
  anthropicEvent({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hello" } }),
  anthropicEvent({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: " there" } }),
  anthropicEvent({ type: "content_block_stop", index: 0 }),
].join("");
const MESSAGE_DELTA = anthropicEvent({ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 5 } });
const PING = anthropicEvent({ type: "ping" });

/** Gemini's SSE events (`alt=sse`): one `GenerateContentResponse` per `data:`, CRLF line ends. */
const geminiEvent = (data: object) => `data: ${JSON.stringify(data)}\r\n\r\n`;
const geminiHead = { modelVersion: "gemini-2.5-flash", responseId: "resp-held" };
const geminiText = (text: string, finishReason?: string, usage = true) =>
  geminiEvent({
    candidates: [{ content: { role: "model", parts: [{ text }] }, index: 0, ...(finishReason && { finishReason }) }],
    ...(usage && { usageMetadata: finishReason ? { promptTokenCount: 12, candidatesTokenCount: 5, totalTokenCount: 17 } : { promptTokenCount: 12 } }),
    ...geminiHead,
  });
const GEMINI_METADATA = geminiEvent({ usageMetadata: { promptTokenCount: 12, totalTokenCount: 12 }, ...geminiHead });

interface Chunk {
  id: string;
  choices: Array<{ delta: { content?: string | null }; finish_reason: string | null }>;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
}

let fake: MisbehavingUpstream;
let h: Harness;

beforeAll(async () => {
  fake = await startMisbehavingUpstream();
  const upstream = { base_url: fake.url, api_key: "sk-upstream-framed" };
  h = await startHarness(
    testConfig(
      {
        // A timeout far longer than any test here: only the router's own ending closes a held request soon.
        anthropic: { plugin: "provider-anthropic", ...upstream, models: ["claude-sonnet-4-5"], timeout: "60s" },
        gemini: { plugin: "provider-gemini", ...upstream, models: ["gemini-2.5-flash"], timeout: "60s" },
        "anthropic-3s": { plugin: "provider-anthropic", ...upstream, models: ["claude-sonnet-4-5"], timeout: "3s" },
        "gemini-3s": { plugin: "provider-gemini", ...upstream, models: ["gemini-2.5-flash"], timeout: "3s" },
      },
      { storage: { plugin: "storage-unstorage", options: { driver: "memory" } } },
    ),
    "http",
  );
});
beforeEach(() => fake.reset());
afterAll(async () => {
  await h?.close();
  await fake?.close();
});

/** Streams a chat request; the SSE data of a 200, or the status and error body of any other reply. */
async function stream(model: string, extra: Record<string, unknown> = {}) {
  const res = await h.request("/v1/chat/completions", postJson({ model, stream: true, messages: ask, ...extra }));
  if (!(res.headers.get("content-type") ?? "").startsWith(SSE)) return { status: res.status, data: [] as string[], error: ((await res.json()) as { error: { code: string } }).error };
  return { status: res.status, data: await readSse(res), error: undefined };
}

const chunksOf = (data: string[]) => data.filter((d) => d !== "[DONE]").map((d) => JSON.parse(d) as Chunk);
const textOf = (data: string[]) => chunksOf(data).map((c) => c.choices[0]?.delta.content ?? "").join("");
const errorsOf = (data: string[]) => data.filter((d) => d.startsWith('{"error"'));

/** The stored completion of `id` (`store: true`). */
async function stored(id: string) {
  const res = await h.request(`/v1/chat/completions/${id}`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as { choices: Array<{ message: { content: string }; finish_reason: string }> };
}

/** A stream that ended as a whole answer: 200, no error event, `text` in its chunks, then `[DONE]`. */
function expectWhole(status: number, data: string[], text: string): void {
  expect(status).toBe(200);
  expect(errorsOf(data)).toEqual([]);
  expect(data.at(-1)).toBe("[DONE]");
  expect(textOf(data)).toBe(text);
}

/** The router closes the upstream connection of request 0 on its own, well before the 60 s timeout. */
async function expectUpstreamClosed(): Promise<void> {
  expect(fake.requests[0], "the request reached the upstream").toBeDefined();
  expect(await within(fake.connectionClosed(0), 10_000), "the router held the upstream request open").toBeDefined();
}

describe("an upstream that holds its connection open once the answer is whole", () => {
  it("anthropic (message_delta, no message_stop): [DONE], stored, and the upstream request closed", async () => {
    fake.next({ contentType: SSE, body: MESSAGE_START + HELLO + MESSAGE_DELTA, rest: { stall: true } });
    const { status, data } = await stream("anthropic/claude-sonnet-4-5", { store: true });
    expectWhole(status, data, "Hello there");
    expect(chunksOf(data).at(-1)!.choices[0]!.finish_reason).toBe("stop");
    expect((await stored(chunksOf(data)[0]!.id)).choices[0]).toMatchObject({ finish_reason: "stop", message: { content: "Hello there" } });
    await expectUpstreamClosed();
  });

  it("gemini (last candidate with finishReason and usageMetadata): the usage chunk at once, [DONE], and the upstream request closed", async () => {
    fake.next({ contentType: SSE, body: geminiText("Hello") + geminiText(" there", "STOP"), rest: { stall: true } });
    const { status, data } = await stream("gemini/gemini-2.5-flash", { store: true, stream_options: { include_usage: true } });
    expectWhole(status, data, "Hello there");
    // The usage of the event that finished the answer: the body's end is not waited for.
    expect(chunksOf(data).at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 } });
    expect((await stored(chunksOf(data)[0]!.id)).choices[0]).toMatchObject({ finish_reason: "stop", message: { content: "Hello there" } });
    await expectUpstreamClosed();
  });

  it("gemini without usageMetadata: [DONE] a second after the finish reason, and the upstream request closed", async () => {
    fake.next({ contentType: SSE, body: geminiText("Hello", undefined, false) + geminiText(" there", "STOP", false), rest: { stall: true } });
    const { status, data } = await stream("gemini/gemini-2.5-flash", { store: true });
    expectWhole(status, data, "Hello there");
    expect((await stored(chunksOf(data)[0]!.id)).choices[0]).toMatchObject({ finish_reason: "stop" });
    await expectUpstreamClosed();
  });
});

describe("an upstream that sends events but never an answer", () => {
  // One event a second for a minute: each gap well within the 3 s timeout.
  const every = (event: string) => ({ contentType: SSE, body: event, rest: { paced: Array<string>(60).fill(event), everyMs: 1_000 } });

  it.each([
    ["anthropic pings", "anthropic-3s/claude-sonnet-4-5", PING],
    ["gemini metadata-only events", "gemini-3s/gemini-2.5-flash", GEMINI_METADATA],
  ])("%s: 504 upstream_timeout at the provider's timeout, the upstream request closed", async (_name, model, event) => {
    fake.next(every(event));
    // Bounded: without the whole-wait deadline the request would wait the fake's whole minute.
    const reply = await within(stream(model), 15_000);
    expect(reply, "the client got no reply while the upstream kept sending events").toBeDefined();
    expect(reply!.status).toBe(504);
    expect(reply!.error).toMatchObject({ code: "upstream_timeout" });
    await expectUpstreamClosed();
  });

  it("anthropic: pings before message_start are waited through within the timeout, and the stream then runs to its end", async () => {
    fake.next({ contentType: SSE, body: PING, rest: { paced: [PING, PING, MESSAGE_START + HELLO + MESSAGE_DELTA + anthropicEvent({ type: "message_stop" })], everyMs: 500 } });
    const { status, data } = await stream("anthropic-3s/claude-sonnet-4-5");
    expect(status).toBe(200);
    expect(data.at(-1)).toBe("[DONE]");
    expect(textOf(data)).toBe("Hello there");
  });
});

describe("an anthropic body that ends without message_stop", () => {
  it("after the stop_reason: a whole answer, [DONE] with the usage chunk, stored", async () => {
    fake.next({ contentType: SSE, body: MESSAGE_START + HELLO + MESSAGE_DELTA });
    const { status, data } = await stream("anthropic/claude-sonnet-4-5", { store: true, stream_options: { include_usage: true } });
    expectWhole(status, data, "Hello there");
    expect(chunksOf(data).at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 } });
    expect((await stored(chunksOf(data)[0]!.id)).choices[0]).toMatchObject({ finish_reason: "stop", message: { content: "Hello there" } });
  });

  it("before any stop_reason: the stream's error event, no [DONE]", async () => {
    fake.next({ contentType: SSE, body: MESSAGE_START + HELLO });
    const { status, data } = await stream("anthropic/claude-sonnet-4-5");
    expect(status).toBe(200);
    expect(textOf(data.slice(0, -1))).toBe("Hello there");
    expect(data).not.toContain("[DONE]");
    expect(errorsOf(data)).toHaveLength(1);
    expect(JSON.parse(data.at(-1)!)).toMatchObject({ error: { type: "api_error", code: "upstream_error" } });
  });
});
