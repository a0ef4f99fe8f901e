/**
 * The plugin's `setup(...)` result against the fake Gemini upstream, over the core's real HTTP
 * client: what goes on the wire, and what comes back for every kind of reply.
 */
import { describe, expect, it, vi } from "vitest";
import { createLogger, createRouter, type ChatRequest } from "@modelmux/core";
import { startFakeGemini, type GeminiWireRequest } from "../../../test/fixtures/fake-gemini.ts";
import { collect, rejection, streamFailure, useProviderCalls, weatherTool } from "../../../test/helpers/provider-call.ts";
import plugin from "../src/index.ts";

const KEY = "AIzaSyProviderTestKey-0123456789abcdefg";
const t = useProviderCalls({ plugin, model: "gemini-2.5-flash", start: () => startFakeGemini({ apiKey: KEY }), options: (fake) => ({ base_url: fake.url, api_key: KEY }) });
const { provider, call, ask, askStream } = t;
const sent = (i = 0) => t.fake.requests[i]!.body as GeminiWireRequest;

describe("chat (JSON)", () => {
  it("sends the translated body with the key in x-goog-api-key, never in the URL", async () => {
    t.fake.next({ text: "Hi there.", usage: { input: 5, output: 2 } });
    const completion = await (await provider()).chat(ask("hello", { messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "hello" }], temperature: 0.2 }), call());
    expect(completion).toMatchObject({
      id: "chatcmpl-fake-response-0",
      object: "chat.completion",
      model: "gemini-2.5-flash",
      choices: [{ index: 0, finish_reason: "stop", native_finish_reason: "STOP", message: { role: "assistant", content: "Hi there." } }],
      usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
    });
    const [request] = t.fake.requests;
    expect(request!.path).toBe("/v1beta/models/gemini-2.5-flash:generateContent");
    expect(request!.path).not.toContain("key");
    expect(request!.headers).toMatchObject({ "x-goog-api-key": KEY, "content-type": "application/json", accept: "application/json" });
    expect(request!.body).toEqual({
      contents: [{ role: "user", parts: [{ text: "hello" }] }],
      systemInstruction: { parts: [{ text: "Be brief." }] },
      generationConfig: { temperature: 0.2 },
    });
  });

  it.each(["", "/", "//"])("accepts base_url with %j appended, and another api_version", async (suffix) => {
    await (await provider({ base_url: t.fake.url + suffix, api_version: "v1alpha" })).chat(ask("x"), call());
    expect(t.fake.requests[0]!.path).toBe("/v1alpha/models/gemini-2.5-flash:generateContent");
  });

  it("sends extra headers (they win) and safety settings", async () => {
    const safety = [{ category: "HARM_CATEGORY_HATE_SPEECH", threshold: "BLOCK_ONLY_HIGH" }];
    await (await provider({ headers: { "X-Team": "blue", Accept: "application/json; q=1" }, safety_settings: safety })).chat(ask("x"), call());
    expect(t.fake.requests[0]!.headers).toMatchObject({ "x-team": "blue", accept: "application/json; q=1" });
    expect(sent().safetySettings).toEqual(safety);
  });

  it("returns a tool call, then sends its result back as a named functionResponse", async () => {
    t.fake.next({ toolCall: { name: "get_weather", arguments: '{"city":"Paris"}' } });
    const p = await provider();
    const first = await p.chat(ask("weather in Paris?", { tools: [weatherTool], tool_choice: "required" }), call());
    const toolCall = first.choices[0]!.message.tool_calls![0]!;
    expect(first.choices[0]!.finish_reason).toBe("tool_calls");
    expect(toolCall).toMatchObject({ type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } });
    expect(toolCall.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(sent().tools).toEqual([{ functionDeclarations: [{ name: "get_weather", parametersJsonSchema: weatherTool.function.parameters }] }]);
    expect(sent().toolConfig).toEqual({ functionCallingConfig: { mode: "ANY" } });

    t.fake.next({ text: "Sunny." });
    const messages: ChatRequest["messages"] = [
      { role: "user", content: "weather in Paris?" },
      first.choices[0]!.message,
      { role: "tool", tool_call_id: toolCall.id, content: '{"sky":"sunny"}' },
    ];
    const second = await p.chat(ask("", { messages, tools: [weatherTool] }), call());
    expect(second.choices[0]!.message.content).toBe("Sunny.");
    expect(sent(1).contents).toEqual([
      { role: "user", parts: [{ text: "weather in Paris?" }] },
      { role: "model", parts: [{ functionCall: { name: "get_weather", args: { city: "Paris" } } }] },
      { role: "user", parts: [{ functionResponse: { name: "get_weather", response: { sky: "sunny" } } }] },
    ]);
  });

  it("asks for n candidates and returns n choices", async () => {
    const completion = await (await provider()).chat(ask("x", { n: 2 }), call());
    expect(sent().generationConfig).toEqual({ candidateCount: 2 });
    expect(completion.choices.map((c) => c.index)).toEqual([0, 1]);
  });

  it("maps a blocked prompt to content_filter", async () => {
    t.fake.next({ raw: { body: JSON.stringify({ promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 4, totalTokenCount: 4 } }) } });
    const completion = await (await provider()).chat(ask("x"), call());
    expect(completion.choices[0]).toMatchObject({ finish_reason: "content_filter", native_finish_reason: "SAFETY", message: { content: null } });
  });
});

describe("chatStream", () => {
  it("streams content deltas, the finish chunk and the usage chunk, with one id", async () => {
    t.fake.next({ text: "one two three", usage: { input: 3, output: 4 } });
    const chunks = await collect(await (await provider()).chatStream!(askStream("count"), call()), "object");
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: "assistant", content: "one " });
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("one two three");
    expect(chunks.at(-2)!.choices[0]).toMatchObject({ finish_reason: "stop", native_finish_reason: "STOP" });
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } });
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(t.fake.requests[0]!.path).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    expect(t.fake.requests[0]!.headers.accept).toBe("text/event-stream");
  });

  it("streams a function call as one whole tool-call delta", async () => {
    t.fake.next({ toolCall: { name: "get_weather", arguments: '{"city":"Paris"}', id: "fc-7" } });
    const chunks = await collect(await (await provider()).chatStream!(askStream("weather?", { tools: [weatherTool] }), call()), "object");
    expect(chunks[0]!.choices[0]!.delta).toEqual({
      role: "assistant",
      tool_calls: [{ index: 0, id: "fc-7", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
    });
    expect(chunks[1]!.choices[0]!.finish_reason).toBe("tool_calls");
  });

  it("throws the mapped error before the first item when the upstream refuses", async () => {
    t.fake.next({ error: { status: 429, message: "Quota exceeded.", retryAfter: "3" } });
    const error = await rejection((await provider()).chatStream!(askStream("x"), call()));
    expect(error).toMatchObject({ status: 429, type: "rate_limit_error", headers: { "retry-after": "3" } });
  });

  it("yields the chunks so far, then throws the error event inside the stream", async () => {
    const event = JSON.stringify({ candidates: [{ content: { parts: [{ text: "a" }] }, index: 0 }], responseId: "r" });
    const body = JSON.stringify({ error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" } });
    t.fake.next({ raw: { body: `data: ${event}\r\n\r\ndata: ${body}\r\n\r\n`, contentType: "text/event-stream" } });
    const { seen, error } = await streamFailure((await provider()).chatStream!(askStream("x"), call()));
    expect(seen).toHaveLength(1);
    expect(error).toMatchObject({ status: 502, code: "upstream_error", message: "gemini: The model is overloaded. (status 503)" });
  });

  it("yields the chunks so far, then throws 502 when the connection is destroyed", async () => {
    t.fake.next({ text: "a b c d", streamFailure: { afterChunks: 2, mode: "destroy" } });
    const { seen, error } = await streamFailure((await provider()).chatStream!(askStream("x"), call()));
    expect(seen).toHaveLength(2);
    expect(error).toMatchObject({ status: 502, code: "upstream_error" });
  });

  it("throws 504 once a stalled stream exceeds the timeout, and the upstream sees the client leave", async () => {
    t.fake.next({ text: "a b c", streamFailure: { afterChunks: 1, mode: "stall" } });
    const { seen, error } = await streamFailure((await provider()).chatStream!(askStream("x"), call({ timeoutMs: 300 })));
    expect(seen).toHaveLength(1);
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
  it.each([
    [400, "INVALID_ARGUMENT", "invalid_request_error"],
    [401, "UNAUTHENTICATED", "invalid_request_error"],
    [403, "PERMISSION_DENIED", "invalid_request_error"],
  ])("keeps a %i with Google's message and status name", async (status, name, type) => {
    t.fake.next({ error: { status, message: `Google says ${status}` } });
    const error = await rejection((await provider()).chat(ask("x"), call()));
    expect(error.toEnvelope()).toEqual({ error: { message: `gemini: Google says ${status}`, type, code: name, param: null } });
    expect(error.status).toBe(status);
  });

  it("maps 429 to rate_limit_error with Google's RetryInfo as retry-after when there is no header", async () => {
    const body = JSON.stringify({
      error: { code: 429, message: "You exceeded your current quota.", status: "RESOURCE_EXHAUSTED", details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "41.2s" }] },
    });
    t.fake.next({ raw: { status: 429, body } });
    const error = await rejection((await provider()).chat(ask("x"), call()));
    expect(error).toMatchObject({ status: 429, type: "rate_limit_error", code: "rate_limit_exceeded", headers: { "retry-after": "42" } });
  });

  it.each([500, 503])("maps %i to 502 upstream_error", async (status) => {
    t.fake.next({ error: { status, message: "The model is overloaded." } });
    const error = await rejection((await provider()).chat(ask("x"), call()));
    expect(error).toMatchObject({ status: 502, type: "api_error", code: "upstream_error" });
    expect(error.message).toContain(`status ${status}`);
  });

  it("reports a wrong key without any part of it, in the error and in the log", async () => {
    const lines: string[] = [];
    const debugLogger = createLogger({ level: "debug", write: (text) => lines.push(text) });
    const wrong = "AIzaSyThisIsTheWrongKey-abcdefghijklmn";
    const error = await rejection((await provider({ api_key: wrong }, { logger: debugLogger })).chat(ask("x"), call()));
    expect(error).toMatchObject({ status: 400, code: "INVALID_ARGUMENT" });
    expect(error.message).toContain("API key not valid");
    t.fake.next({ error: { status: 400, message: `API key ${KEY} has expired` } });
    const echoed = await rejection((await provider({}, { logger: debugLogger })).chat(ask("x"), call()));
    expect(echoed.message).toBe("gemini: API key [redacted] has expired");
    debugLogger.flush();
    expect(lines.join("")).toContain("upstream replied 400");
    expect(lines.join("")).not.toContain(KEY);
    expect(lines.join("")).not.toContain(wrong);
  });

  it("sends no key header without api_key (Google answers 403)", async () => {
    const error = await rejection((await provider({ api_key: undefined })).chat(ask("x"), call()));
    expect(t.fake.requests[0]!.headers["x-goog-api-key"]).toBeUndefined();
    expect(error).toMatchObject({ status: 403, code: "PERMISSION_DENIED" });
  });

  // A 200 that is not JSON at all is the conformance kit's "answers 502 for a 200 reply that is not the provider's format".
  it("maps a 200 reply that is JSON without candidates to 502", async () => {
    t.fake.next({ raw: { body: '{"modelVersion":"x"}' } });
    expect(await rejection((await provider()).chat(ask("x"), call()))).toMatchObject({ status: 502, code: "upstream_error" });
  });

  it("keeps the status of an error reply whose body is not JSON", async () => {
    t.fake.next({ raw: { status: 404, body: "Not Found", contentType: "text/plain" } });
    expect(await rejection((await provider()).chat(ask("x"), call()))).toMatchObject({ status: 404, message: "gemini: Not Found" });
  });

  it("maps a reply slower than the timeout to 504 upstream_timeout", async () => {
    t.fake.next({ holdMs: 3_000 });
    const error = await rejection((await provider()).chat(ask("x"), call({ timeoutMs: 200 })));
    expect(error).toMatchObject({ status: 504, type: "api_error", code: "upstream_timeout" });
    expect((await t.fake.finished(0)).aborted).toBe(true);
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
    const iterator = (await (await provider()).chatStream!(askStream("x"), call({ signal: controller.signal })))[Symbol.asyncIterator]();
    expect((await iterator.next()).done).toBe(false);
    controller.abort();
    await expect(iterator.next()).rejects.toMatchObject({ name: "AbortError" });
    expect((await t.fake.finished(0)).aborted).toBe(true);
  });
});

describe("definition", () => {
  it("is named gemini and declares capabilities per model", async () => {
    expect(plugin).toMatchObject({ kind: "provider", name: "gemini" });
    const p = await provider();
    expect(p.capabilities("gemini-2.5-flash")).toMatchObject({ tools: true, vision: true, reasoning_effort: true });
    expect(p.capabilities("gemini-2.5-flash-image")).toMatchObject({ images: true, chat: false });
  });

  it.each([
    [{ base_url: "localhost:8080" }, "base_url"],
    [{ apikey: "typo" }, "apikey"],
    [{ safety_settings: [{ category: "HARM_CATEGORY_HARASSMENT" }] }, "threshold"],
  ])("refuses bad options %j at load time", async (options, mention) => {
    const config = { auth: { api_keys: [{ key: "k" }] }, providers: { g: { plugin: "under-test", models: ["gemini-2.5-flash"], ...options } } };
    const error = await createRouter(config, { logger: t.logger, plugins: { "under-test": plugin } }).then(
      async (router) => (await router.close(), undefined),
      (e: unknown) => e as Error,
    );
    expect(error?.message).toContain(mention);
  });
});
