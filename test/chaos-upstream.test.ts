/**
 * The chaos upstream (test/helpers/chaos-upstream.ts) speaks each provider's wire format exactly:
 * the official `openai` and `@anthropic-ai/sdk` clients (no retries) read its answers, raise
 * `APIError` with the right status and body for its errors, and fail on its broken streams; raw
 * SSE reads check what the SDKs forgive (a missing end marker, the event after a malformed one).
 * It also checks the record of attempts, the down window and the continuation of a prefill.
 */
import Anthropic from "@anthropic-ai/sdk";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import OpenAI from "openai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { answerText, CHAOS_ERRORS, startChaosUpstream, type ChaosUpstream } from "./helpers/chaos-upstream.ts";
import { sleep, until } from "./helpers/wait.ts";

let up: ChaosUpstream;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  up = await startChaosUpstream();
  openai = new OpenAI({ baseURL: up.openaiBaseUrl, apiKey: "sk-chaos", maxRetries: 0, timeout: 5000 });
  anthropic = new Anthropic({ baseURL: up.anthropicBaseUrl, apiKey: "sk-ant-chaos", maxRetries: 0, timeout: 5000 });
});
beforeEach(() => up.reset());
afterAll(() => up.close());

const ask: ChatCompletionMessageParam[] = [{ role: "user", content: "count" }];
const continuing = (text: string): ChatCompletionMessageParam[] => [...ask, { role: "assistant", content: text }];

const chat = (messages = ask) => openai.chat.completions.create({ model: "gpt-4o", messages });
const message = (messages: Anthropic.MessageParam[] = [{ role: "user", content: "count" }]) => anthropic.messages.create({ model: "claude-chaos-1", max_tokens: 64, messages });

/** Reads an OpenAI stream through the SDK to its end or its error. */
async function openaiStream(messages = ask, signal?: AbortSignal) {
  const result = { text: "", finishes: [] as string[], usage: undefined as OpenAI.CompletionUsage | undefined, error: undefined as unknown };
  try {
    const stream = await openai.chat.completions.create({ model: "gpt-4o", messages, stream: true, stream_options: { include_usage: true } }, { signal });
    for await (const chunk of stream) {
      result.text += chunk.choices[0]?.delta.content ?? "";
      if (chunk.choices[0]?.finish_reason) result.finishes.push(chunk.choices[0].finish_reason);
      if (chunk.usage) result.usage = chunk.usage;
    }
  } catch (error) {
    result.error = error;
  }
  return result;
}

/** Reads an Anthropic stream through the SDK to its end or its error. */
async function anthropicStream(messages: Anthropic.MessageParam[] = [{ role: "user", content: "count" }]) {
  const result = { text: "", types: [] as string[], stop: undefined as string | null | undefined, error: undefined as unknown };
  try {
    const stream = await anthropic.messages.create({ model: "claude-chaos-1", max_tokens: 64, messages, stream: true });
    for await (const event of stream) {
      result.types.push(event.type);
      if (event.type === "content_block_delta" && event.delta.type === "text_delta") result.text += event.delta.text;
      if (event.type === "message_delta") result.stop = event.delta.stop_reason;
    }
  } catch (error) {
    result.error = error;
  }
  return result;
}

/** The SSE events of a stream that ends, read raw (what an SDK forgives shows here). */
async function rawEvents(path: string, body: object): Promise<EventSourceMessage[]> {
  const response = await fetch(`${up.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ stream: true, ...body }), signal: AbortSignal.timeout(5000) });
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => void events.push(event) });
  parser.feed(await response.text());
  return events;
}
const rawChat = () => rawEvents("/v1/chat/completions", { model: "gpt-4o", messages: ask, stream_options: { include_usage: true } });
const rawMessages = () => rawEvents("/v1/messages", { model: "claude-chaos-1", max_tokens: 64, messages: [{ role: "user", content: "count" }] });

describe("ok", () => {
  it("answers a chat.completion with the deterministic tokens and records the attempt", async () => {
    const completion = await chat();
    expect(completion).toMatchObject({ id: "chatcmpl-chaos-0", object: "chat.completion", model: "gpt-4o", usage: { prompt_tokens: 10, completion_tokens: 8, total_tokens: 18 } });
    expect(completion.choices[0]).toMatchObject({ message: { role: "assistant", content: "t0 t1 t2 t3 t4 t5 t6 t7" }, finish_reason: "stop" });
    expect(up.attempts).toEqual([expect.objectContaining({ path: "/v1/chat/completions", behaviour: "ok", status: 200, sent: answerText(8), aborted: false })]);
    expect(up.attempts[0]!.body).toMatchObject({ model: "gpt-4o", messages: ask });
  });

  it("streams chunks with one finish reason, the usage chunk and [DONE]", async () => {
    up.script({ ok: true, tokens: 3 });
    expect(await openaiStream()).toMatchObject({ text: "t0 t1 t2", finishes: ["stop"], usage: { completion_tokens: 3 }, error: undefined });
    const events = await rawChat();
    expect(events.at(-1)?.data).toBe("[DONE]");
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event.data) as OpenAI.ChatCompletionChunk);
    expect(chunks.every((chunk) => chunk.object === "chat.completion.chunk" && chunk.id === "chatcmpl-chaos-1")).toBe(true);
    expect(chunks.slice(0, -1).map((chunk) => chunk.usage)).toEqual(chunks.slice(0, -1).map(() => null));
  });

  it("answers Anthropic messages, JSON and streamed, with their events in order", async () => {
    const reply = await message();
    expect(reply).toMatchObject({ id: "msg_chaos_0", type: "message", model: "claude-chaos-1", stop_reason: "end_turn", usage: { input_tokens: 10, output_tokens: 8 } });
    expect(reply.content).toEqual([expect.objectContaining({ type: "text", text: answerText(8) })]);
    up.script({ ok: true, tokens: 2 });
    const streamed = await anthropicStream();
    expect(streamed).toMatchObject({ text: "t0 t1", stop: "end_turn", error: undefined });
    expect(streamed.types).toEqual(["message_start", "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop"]);
    expect((await rawMessages()).map((event) => event.event)).toContain("ping");
  });

  it("holds the first token for delayFirstTokenMs", async () => {
    up.script({ ok: true, delayFirstTokenMs: 200 });
    const started = performance.now();
    expect((await openaiStream()).text).toBe(answerText(8));
    expect(performance.now() - started).toBeGreaterThanOrEqual(180);
  });
});

describe("status", () => {
  const presets = [
    { preset: CHAOS_ERRORS.rateLimit, openai: { type: "requests", code: "rate_limit_exceeded" }, anthropic: "rate_limit_error" },
    { preset: CHAOS_ERRORS.serverError, openai: { type: "server_error", code: null }, anthropic: "api_error" },
    { preset: CHAOS_ERRORS.unavailable, openai: { type: "server_error", code: null }, anthropic: "overloaded_error" },
    { preset: CHAOS_ERRORS.overloaded, openai: { type: "server_error", code: null }, anthropic: "overloaded_error" },
    { preset: CHAOS_ERRORS.contextLengthExceeded, openai: { type: "invalid_request_error", code: "context_length_exceeded" }, anthropic: "invalid_request_error" },
    { preset: CHAOS_ERRORS.contentPolicy, openai: { type: "invalid_request_error", code: "content_policy_violation" }, anthropic: "invalid_request_error" },
  ];

  it.each(presets)("$preset.status $preset.reason reaches both SDKs as an APIError in the provider's shape", async ({ preset, openai: expected, anthropic: type }) => {
    up.script(preset, preset);
    const openaiError = await chat().catch((error: unknown) => error);
    expect(openaiError).toBeInstanceOf(OpenAI.APIError);
    expect(openaiError).toMatchObject({ status: preset.status, ...expected, param: expect.toSatisfy((p) => p === null || typeof p === "string") });
    const anthropicError = await message().catch((error: unknown) => error);
    expect(anthropicError).toBeInstanceOf(Anthropic.APIError);
    expect(anthropicError).toMatchObject({ status: preset.status, error: { type: "error", error: { type } } });
    expect(up.attempts.map((attempt) => [attempt.behaviour, attempt.status])).toEqual([["status", preset.status], ["status", preset.status]]);
  });

  it("keeps the provider's reason text and sends retry-after (seconds or date) and retry-after-ms", async () => {
    const date = new Date(Date.now() + 3000).toUTCString();
    up.script({ ...CHAOS_ERRORS.rateLimit, retryAfter: "2", retryAfterMs: 1500 }, { ...CHAOS_ERRORS.contentPolicy, retryAfter: date });
    const limited = (await chat().catch((error: unknown) => error)) as InstanceType<typeof OpenAI.APIError>;
    expect([limited.headers?.get("retry-after"), limited.headers?.get("retry-after-ms")]).toEqual(["2", "1500"]);
    const refused = (await message().catch((error: unknown) => error)) as InstanceType<typeof Anthropic.APIError>;
    expect(refused.message).toContain("Output blocked by content filtering policy");
    expect(refused.headers?.get("retry-after")).toBe(date);
  });

  it("sends a verbatim body (a proxy's HTML page) when told", async () => {
    up.script({ status: 502, body: "<html><body>Bad Gateway</body></html>" });
    await expect(chat()).rejects.toMatchObject({ status: 502 });
  });
});

describe("broken connections", () => {
  it("reset: the connection is reset before any byte, a connection error to both SDKs", async () => {
    up.script("reset", "reset");
    await expect(chat()).rejects.toBeInstanceOf(OpenAI.APIConnectionError);
    await expect(message()).rejects.toBeInstanceOf(Anthropic.APIConnectionError);
    expect(await up.finished(0)).toMatchObject({ behaviour: "reset", aborted: false });
    expect(up.attempts[0]!.status).toBeUndefined();
  });

  it("hang: nothing is sent until the client goes, then the attempt is marked aborted", async () => {
    up.script("hang", "hang");
    const controller = new AbortController();
    const pending = openai.chat.completions.create({ model: "gpt-4o", messages: ask }, { signal: controller.signal });
    await up.attempt(0);
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(OpenAI.APIUserAbortError);
    expect(await up.finished(0)).toMatchObject({ behaviour: "hang", aborted: true });
    expect(up.attempts[0]!.status).toBeUndefined();
    await expect(anthropic.messages.create({ model: "m", max_tokens: 8, messages: [{ role: "user", content: "x" }] }, { timeout: 200 })).rejects.toBeInstanceOf(Anthropic.APIConnectionTimeoutError);
    expect((await up.finished(1)).aborted).toBe(true);
  });

  it("cutAfter: N tokens, then the connection ends without finish reason, usage or end marker", async () => {
    up.script({ cutAfter: 3 }, { cutAfter: 2 }, { cutAfter: 1 });
    const cut = await openaiStream();
    expect(cut).toMatchObject({ text: "t0 t1 t2", finishes: [], usage: undefined });
    expect(cut.error).toBeInstanceOf(Error);
    const anthropicCut = await anthropicStream();
    expect(anthropicCut.text).toBe("t0 t1");
    expect(anthropicCut.types).not.toContain("message_delta");
    expect(anthropicCut.error).toBeInstanceOf(Error);
    await expect(chat()).rejects.toBeInstanceOf(Error); // JSON: half a body, then the end
    expect(up.attempts.map((attempt) => [attempt.sent, attempt.aborted])).toEqual([["t0 t1 t2", false], ["t0 t1", false], ["", false]]);
  });

  it("stallAfter: N tokens, then silence on an open connection until the client goes", async () => {
    up.script({ stallAfter: 2 }, { stallAfter: 1 });
    const controller = new AbortController();
    const reading = openaiStream(ask, controller.signal);
    await until(() => up.attempts[0]?.sent === "t0 t1", "two tokens sent");
    await sleep(100);
    controller.abort();
    // The SDK ends a stream's iteration quietly when its signal aborts: what counts is what came.
    expect(await reading).toMatchObject({ text: "t0 t1", finishes: [], usage: undefined });
    expect((await up.finished(0)).aborted).toBe(true);
    // JSON: headers and half the body, then silence. The SDK's `timeout` stops at the headers, so a signal ends it.
    await expect(openai.chat.completions.create({ model: "gpt-4o", messages: ask }, { signal: AbortSignal.timeout(300) })).rejects.toBeInstanceOf(Error);
    expect(await up.finished(1)).toMatchObject({ status: 200, aborted: true });
  });
});

describe("malformed and unfinished streams", () => {
  it("malformedAfter: one event that is not JSON, then the rest or the end", async () => {
    up.script({ malformedAfter: 2 }, { malformedAfter: 2 }, { malformedAfter: 1, then: "end" }, { malformedAfter: 1 }, { malformedAfter: 0 });
    const broken = await openaiStream();
    expect(broken.text).toBe("t0 t1");
    expect(String(broken.error)).toMatch(/JSON/);
    const continued = (await rawChat()).map((event) => event.data);
    expect(() => JSON.parse(continued[3]!)).toThrow();
    expect(continued.at(-1)).toBe("[DONE]");
    const ended = (await rawChat()).map((event) => event.data);
    expect(ended).toHaveLength(3); // role, t0, the malformed one
    expect((await anthropicStream()).error).toBeInstanceOf(Error);
    await expect(chat()).rejects.toBeInstanceOf(Error); // JSON: a 200 body that is not JSON
  });

  it("errorAfter: N tokens, then the provider's error event and the end", async () => {
    up.script({ errorAfter: 2 }, { errorAfter: 1, reason: "rate_limit" }, { errorAfter: 3 }, { errorAfter: 1, reason: "server_error" });
    const openaiBroken = await openaiStream();
    expect(openaiBroken).toMatchObject({ text: "t0 t1", finishes: [] });
    expect(openaiBroken.error).toBeInstanceOf(OpenAI.APIError);
    expect(openaiBroken.error).toMatchObject({ type: "server_error", message: expect.stringContaining("overloaded") });
    const anthropicBroken = await anthropicStream();
    expect(anthropicBroken.text).toBe("t0");
    expect(anthropicBroken.error).toMatchObject({ error: { type: "error", error: { type: "rate_limit_error" } } });
    const raw = (await rawChat()).map((event) => event.data);
    expect(raw).toHaveLength(5); // role, t0, t1, t2, the error
    expect(JSON.parse(raw[4]!)).toEqual({ error: { message: expect.any(String), type: "server_error", param: null, code: null } });
    await expect(chat()).rejects.toMatchObject({ status: 500 }); // JSON: the reason's status
  });

  it("noDone: the whole answer with finish reason and usage, but no end marker", async () => {
    up.setDefault("noDone");
    expect(await openaiStream()).toMatchObject({ text: answerText(8), finishes: ["stop"], usage: { completion_tokens: 8 }, error: undefined });
    const chunks = await rawChat();
    expect(chunks.map((event) => event.data)).not.toContain("[DONE]");
    expect(JSON.parse(chunks.at(-1)!.data)).toMatchObject({ choices: [], usage: { total_tokens: 18 } });
    const events = (await rawMessages()).map((event) => event.event);
    expect(events.at(-1)).toBe("message_delta");
  });
});

describe("downFor and refusePrefill", () => {
  it("downFor: 503 for every request in the window, without taking the script, then ok", async () => {
    up.setDefault({ downFor: 300 });
    await expect(chat()).rejects.toMatchObject({ status: 503 });
    up.script({ ok: true, tokens: 2 });
    await expect(message()).rejects.toMatchObject({ status: 503, error: { error: { type: "overloaded_error" } } });
    await until(() => performance.now() > up.attempts[0]!.at + 350, "the window to pass");
    expect((await chat()).choices[0]?.message.content).toBe("t0 t1");
    expect((await chat()).choices[0]?.message.content).toBe(answerText(8));
    expect(up.attempts.map((attempt) => attempt.behaviour)).toEqual(["downFor", "downFor", "ok", "ok"]);
  });

  it("refusePrefill: a 400 in the provider's shape for a final assistant message, ok for others", async () => {
    up.setDefault("refusePrefill");
    expect((await chat()).choices[0]?.message.content).toBe(answerText(8));
    await expect(chat(continuing("t0"))).rejects.toMatchObject({ status: 400, type: "invalid_request_error", message: expect.stringContaining("does not support assistant message prefill") });
    await expect(message([{ role: "user", content: "count" }, { role: "assistant", content: "t0" }])).rejects.toMatchObject({ status: 400, error: { error: { type: "invalid_request_error" } } });
    expect(up.attempts.map((attempt) => [attempt.behaviour, attempt.status])).toEqual([["ok", 200], ["refusePrefill", 400], ["refusePrefill", 400]]);
  });
});

describe("continuation", () => {
  it("answers the rest of the tokens after an assistant prefill, in both formats", async () => {
    const rest = await openaiStream(continuing("t0 t1 t2"));
    expect(rest).toMatchObject({ text: " t3 t4 t5 t6 t7", usage: { completion_tokens: 5 } });
    const anthropicRest = await message([{ role: "user", content: "count" }, { role: "assistant", content: [{ type: "text", text: "t0 t1 t2 t3 t4" }] }]);
    expect(anthropicRest.content).toEqual([expect.objectContaining({ text: " t5 t6 t7" })]);
    expect(up.attempts.map((attempt) => attempt.prefill)).toEqual(["t0 t1 t2", "t0 t1 t2 t3 t4"]);
  });

  it("a prefill ending in whitespace is refused by the Anthropic wire, leaving the script for the next request", async () => {
    up.script({ ok: true, spacing: "trailing" });
    await expect(message([{ role: "user", content: "count" }, { role: "assistant", content: "t0 t1 " }])).rejects.toMatchObject({ status: 400, message: expect.stringContaining("trailing whitespace") });
    const rest = await message([{ role: "user", content: "count" }, { role: "assistant", content: "t0 t1" }]);
    expect(rest.content).toEqual([expect.objectContaining({ text: " t2 t3 t4 t5 t6 t7" })]);
  });

  it("a prefill that is not the answer's start gets the whole answer again", async () => {
    expect((await chat(continuing("something else"))).choices[0]?.message.content).toBe(answerText(8));
  });
});

describe("the record of attempts", () => {
  it("keeps arrival order and times; an unknown path is a 404 that takes nothing from the script; reset forgets", async () => {
    up.script({ status: 500 });
    const missing = await fetch(`${up.url}/v1/models`, { signal: AbortSignal.timeout(5000) });
    expect([missing.status, await missing.json()]).toEqual([404, { error: expect.objectContaining({ type: "invalid_request_error", message: "Invalid URL (GET /v1/models)" }) }]);
    await expect(chat()).rejects.toMatchObject({ status: 500 });
    await chat();
    const [first, second, third] = up.attempts;
    expect(first!.at).toBeLessThanOrEqual(second!.at);
    expect(second!.at).toBeLessThanOrEqual(third!.at);
    expect(up.attempts.map((attempt) => attempt.status)).toEqual([404, 500, 200]);
    up.reset();
    expect(up.attempts).toEqual([]);
  });
});
