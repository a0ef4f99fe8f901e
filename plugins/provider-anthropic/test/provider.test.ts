/**
 * The plugin's `setup(...)` result against the fake Anthropic upstream, over the core's real HTTP
 * client: what goes on the wire, and what comes back for every kind of reply.
 */
import { describe, expect, it, vi } from "vitest";
import type { MessageCreateParams } from "@anthropic-ai/sdk/resources/messages/messages";
import { startFakeAnthropic } from "../../../test/fixtures/fake-anthropic.ts";
import type { ChatCompletionChunk, ChatStreamItem } from "@modelmux/core";
import { itemsOf, rejection, streamFailure, useProviderCalls, weatherTool } from "../../../test/helpers/provider-call.ts";
import plugin from "../src/index.ts";

const KEY = "sk-ant-api03-provider-test-key-9876";
const t = useProviderCalls({ plugin, model: "claude-sonnet-4-5", start: () => startFakeAnthropic({ apiKey: KEY }), options: (fake) => fake.options });
const { provider, call, ask, askStream } = t;
const sent = (i = 0) => t.fake.requests[i]?.body as MessageCreateParams;

describe("chat (JSON)", () => {
  it("posts to /v1/messages with x-api-key and anthropic-version, and maps the reply", async () => {
    t.fake.next({ text: "Bonjour à vous", usage: { input: 12, output: 4 }, cache: { creation: 3, read: 20 } });
    const completion = await (await provider()).chat(ask("hello there", { model: "anthropic/claude-sonnet-4-5", temperature: 1.5 }), call());
    expect(completion).toMatchObject({
      id: "msg_fake_0",
      object: "chat.completion",
      model: "claude-sonnet-4-5",
      choices: [{ index: 0, finish_reason: "stop", native_finish_reason: "end_turn", message: { role: "assistant", content: "Bonjour à vous" } }],
      usage: { prompt_tokens: 35, completion_tokens: 4, total_tokens: 39, prompt_tokens_details: { cached_tokens: 20, cache_creation_tokens: 3 } },
    });
    const [request] = t.fake.requests;
    expect(request).toMatchObject({ method: "POST", path: "/v1/messages" });
    expect(request?.body).toEqual({ model: "claude-sonnet-4-5", max_tokens: 4096, temperature: 1, messages: [{ role: "user", content: "hello there" }] });
    expect(request?.headers).toMatchObject({ "x-api-key": KEY, "anthropic-version": "2023-06-01", "content-type": "application/json", accept: "application/json" });
    expect(request?.headers.authorization).toBeUndefined();
  });

  it("returns a tool call, and sends tools, tool_choice and the system prompt", async () => {
    t.fake.next({ toolCall: { id: "toolu_9", name: "get_weather", arguments: '{"city":"Paris"}' } });
    const request = ask("weather?", { tools: [weatherTool], tool_choice: "required", parallel_tool_calls: false });
    request.messages.unshift({ role: "system", content: "Be brief." });
    const completion = await (await provider()).chat(request, call());
    expect(completion.choices[0]).toMatchObject({
      finish_reason: "tool_calls",
      native_finish_reason: "tool_use",
      message: { content: null, tool_calls: [{ id: "toolu_9", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
    });
    expect(sent()).toMatchObject({
      system: "Be brief.",
      tools: [{ name: "get_weather", input_schema: { type: "object", properties: { city: { type: "string" } } } }],
      tool_choice: { type: "any", disable_parallel_tool_use: true },
    });
  });

  it("sends the options' version, max_tokens default and extra headers; extra headers win", async () => {
    const p = await provider({ anthropic_version: "2024-01-01", default_max_tokens: 77, headers: { "Anthropic-Beta": "prompt-caching-2024-07-31", Accept: "application/json; q=1" } });
    await p.chat(ask("x"), call());
    expect(t.fake.requests[0]?.headers).toMatchObject({ "anthropic-version": "2024-01-01", "anthropic-beta": "prompt-caching-2024-07-31", accept: "application/json; q=1" });
    expect(sent().max_tokens).toBe(77);
  });

  it.each([["without", ""], ["with", "/"], ["with two", "//"]])("accepts base_url %s a trailing slash", async (_, suffix) => {
    await (await provider({ base_url: t.fake.options.base_url + suffix })).chat(ask("x"), call());
    expect(t.fake.requests[0]?.path).toBe("/v1/messages");
  });
});

/** The chunks of a stream, which comes in batches (see readMessageStreamBatches). */
async function chunksOf(stream: AsyncIterable<ChatStreamItem | readonly ChatStreamItem[]>): Promise<ChatCompletionChunk[]> {
  const out: ChatCompletionChunk[] = [];
  for await (const item of itemsOf(stream)) out.push(typeof item === "string" ? (JSON.parse(item) as ChatCompletionChunk) : item);
  return out;
}

describe("chatStream", () => {
  it("yields role first, text in several chunks, the finish chunk and the usage chunk, under one id", async () => {
    t.fake.next({ text: "one two three four", usage: { input: 9, output: 6 }, thinking: "secret thoughts" });
    const chunks = await chunksOf(await (await provider()).chatStream!(askStream("count"), call()));
    expect(chunks[0]?.choices[0]?.delta.role).toBe("assistant");
    expect(new Set(chunks.map((c) => c.id))).toEqual(new Set(["msg_fake_0"]));
    expect(chunks.filter((c) => c.choices[0]?.delta.content).map((c) => c.choices[0]?.delta.content)).toEqual(["one ", "two ", "three ", "four"]);
    expect(chunks.at(-2)?.choices[0]).toMatchObject({ finish_reason: "stop", native_finish_reason: "end_turn" });
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 9, completion_tokens: 6, total_tokens: 15 } });
    expect(JSON.stringify(chunks)).not.toContain("secret thoughts");
    expect(sent()).toMatchObject({ stream: true });
    expect(t.fake.requests[0]?.headers.accept).toBe("text/event-stream");
  });

  it("streams a tool call whose fragments reassemble to the JSON reply's arguments", async () => {
    const toolCall = { id: "toolu_7", name: "get_weather", arguments: '{"city":"Paris","days":[1,2,3]}' };
    t.fake.next({ toolCall });
    const json = await (await provider()).chat(ask("weather?", { tools: [weatherTool] }), call());
    t.fake.next({ toolCall });
    const chunks = await chunksOf(await (await provider()).chatStream!(askStream("weather?", { tools: [weatherTool] }), call()));
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(deltas[0]).toEqual({ index: 0, id: "toolu_7", type: "function", function: { name: "get_weather", arguments: "" } });
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.map((d) => d.function?.arguments ?? "").join("")).toBe(json.choices[0]?.message.tool_calls?.[0]?.function.arguments);
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe("tool_calls");
  });

  it("throws the mapped error before the first item when the upstream refuses", async () => {
    t.fake.next({ error: { status: 429, message: "slow down", retryAfter: "3" } });
    const error = await rejection((await provider()).chatStream!(askStream("x"), call()));
    expect(error).toMatchObject({ status: 429, type: "rate_limit_error", headers: { "retry-after": "3" } });
  });

  it("yields the chunks so far, then throws 502 for an overloaded_error event", async () => {
    t.fake.next({ text: "a b c d", streamError: { afterChunks: 2, type: "overloaded_error", message: "Overloaded" } });
    const { seen, error } = await streamFailure((await provider()).chatStream!(askStream("x"), call()));
    expect(seen).toHaveLength(3); // the role chunk and two text deltas
    expect(error).toMatchObject({ status: 502, code: "upstream_error", message: "anthropic: Overloaded (status 529)" });
  });

  it("yields the chunks so far, then throws 502 when the connection is destroyed", async () => {
    t.fake.next({ text: "a b c d", streamFailure: { afterChunks: 2, mode: "destroy" } });
    const { seen, error } = await streamFailure((await provider()).chatStream!(askStream("x"), call()));
    expect(seen).toHaveLength(3);
    expect(error).toMatchObject({ status: 502, code: "upstream_error" });
  });

  it("throws 504 once a stalled stream exceeds the timeout, and the upstream sees the client leave", async () => {
    t.fake.next({ text: "a b c", streamFailure: { afterChunks: 1, mode: "stall" } });
    const { seen, error } = await streamFailure((await provider()).chatStream!(askStream("x"), call({ timeoutMs: 300 })));
    expect(seen).toHaveLength(2);
    expect(error).toMatchObject({ status: 504, code: "upstream_timeout" });
    expect((await t.fake.finished(0)).aborted).toBe(true);
  });

  it("closes the upstream request when the consumer stops early", async () => {
    t.fake.next({ text: "a b c", streamFailure: { afterChunks: 2, mode: "stall" } });
    for await (const item of await (await provider()).chatStream!(askStream("x"), call())) {
      expect(item).toBeTypeOf("object");
      break;
    }
    expect((await t.fake.finished(0)).aborted).toBe(true);
  });
});

describe("upstream errors", () => {
  it("keeps a 400's status and message, with Anthropic's error type as the code", async () => {
    t.fake.next({ error: { status: 400, message: "messages.0.content: text content blocks must be non-empty" } });
    const error = await rejection((await provider({}, { name: "claude" })).chat(ask("x"), call()));
    expect(error.status).toBe(400);
    expect(error.toEnvelope()).toEqual({
      error: { message: "claude: messages.0.content: text content blocks must be non-empty", type: "invalid_request_error", code: "invalid_request_error", param: null },
    });
  });

  it("keeps a 401 without the key anywhere in the message", async () => {
    const wrong = "sk-ant-api03-this-is-the-wrong-key-4321";
    const error = await rejection((await provider({ api_key: wrong })).chat(ask("x"), call()));
    expect(error).toMatchObject({ status: 401, type: "invalid_request_error", code: "authentication_error", message: "anthropic: invalid x-api-key" });
    expect(t.fake.requests[0]?.headers["x-api-key"]).toBe(wrong);
  });

  it("keeps 429 with retry-after", async () => {
    t.fake.next({ error: { status: 429, message: "Number of requests has exceeded your rate limit", retryAfter: "17" } });
    const error = await rejection((await provider()).chat(ask("x"), call()));
    expect(error).toMatchObject({ status: 429, type: "rate_limit_error", code: "rate_limit_exceeded", headers: { "retry-after": "17" } });
  });

  it.each([
    [500, "api_error"],
    [529, "overloaded_error"],
  ])("maps %i (%s) to 502 upstream_error with the message kept", async (status) => {
    t.fake.next({ error: { status, message: "Overloaded", retryAfter: "5" } });
    const error = await rejection((await provider()).chat(ask("x"), call()));
    expect(error).toMatchObject({ status: 502, type: "api_error", code: "upstream_error", message: `anthropic: Overloaded (status ${status})` });
  });

  it.each([
    ["a non-JSON error body", { status: 503, body: "<html>Service Unavailable</html>", contentType: "text/html" }, 502, "anthropic: <html>Service Unavailable</html> (status 503)"],
    ["a 200 that is not JSON", { body: "<html>ok</html>" }, 502, "anthropic: the reply is not valid JSON."],
    ["a 200 that is not a message", { body: '{"id":"x"}' }, 502, "anthropic: the reply is not an Anthropic message (no 'content' array)."],
  ])("maps %s", async (_, raw, status, message) => {
    t.fake.next({ raw });
    const error = await rejection((await provider()).chat(ask("x"), call()));
    expect(error).toMatchObject({ status, message });
  });

  it("maps a reply slower than the timeout to 504 upstream_timeout", async () => {
    t.fake.next({ holdMs: 3_000 });
    const error = await rejection((await provider()).chat(ask("x"), call({ timeoutMs: 200 })));
    expect(error).toMatchObject({ status: 504, type: "api_error", code: "upstream_timeout" });
    expect((await t.fake.finished(0)).aborted).toBe(true);
  });

  it("refuses a request it cannot translate without calling the upstream", async () => {
    const request = ask("x");
    request.messages.push({ role: "assistant", content: null, tool_calls: [{ id: "t", type: "function", function: { name: "f", arguments: "{not json" } }] });
    const error = await rejection((await provider()).chat(request, call()));
    expect(error).toMatchObject({ status: 400, param: "messages[1].tool_calls[0].function.arguments" });
    expect(t.fake.requests).toHaveLength(0);
  });
});

describe("abort", () => {
  it("aborts the upstream request when the signal fires", async () => {
    t.fake.next({ holdMs: 10_000 });
    const controller = new AbortController();
    const pending = (await provider()).chat(ask("x"), call({ signal: controller.signal })).then(
      () => "resolved",
      (e: Error) => e.name,
    );
    await vi.waitUntil(() => t.fake.requests.length === 1);
    controller.abort();
    expect(await pending).toBe("AbortError");
    expect((await t.fake.finished(0)).aborted).toBe(true);
  });

  it("aborts a stream in flight when the signal fires", async () => {
    t.fake.next({ text: "a b c", streamFailure: { afterChunks: 1, mode: "stall" } });
    const controller = new AbortController();
    const items = await (await provider()).chatStream!(askStream("x"), call({ signal: controller.signal }));
    const iterator = items[Symbol.asyncIterator]();
    expect((await iterator.next()).done).toBe(false);
    controller.abort();
    // Chunks already received may still come; then the abort, never a normal end.
    const outcome = await (async () => {
      for (;;) if ((await iterator.next()).done) return "ended";
    })().catch((e: Error) => e.name);
    expect(outcome).toBe("AbortError");
    expect((await t.fake.finished(0)).aborted).toBe(true);
  });
});

describe("definition", () => {
  it("is named anthropic, declares capabilities per model and validates its options", async () => {
    expect(plugin.name).toBe("anthropic");
    const p = await provider();
    expect(p.capabilities("claude-sonnet-4-5")).toMatchObject({ tools: true, vision: true, reasoning_effort: true, json_schema: false });
    expect(p.capabilities("claude-3-5-haiku-latest").reasoning_effort).toBe(false);
    expect(plugin.optionsSchema).toMatchObject({ additionalProperties: false, properties: { base_url: { format: "http-url", default: "https://api.anthropic.com" } } });
  });
});
