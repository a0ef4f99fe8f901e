/**
 * The plugin's `setup(...)` result against the fake OpenAI upstream, over the core's real HTTP
 * client: what goes on the wire, and what comes back for every kind of reply.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ModelmuxError, type ChatEventStream } from "@modelmux/core";
import { startFakeOpenAI, type FakeOpenAI } from "../../../test/fixtures/fake-openai.ts";
import { rejection, useProviderCalls, weatherTool } from "../../../test/helpers/provider-call.ts";
import plugin from "../src/index.ts";

const KEY = "sk-proj-provider-test-key-9876";
const t = useProviderCalls({ plugin, model: "gpt-4o-mini", start: () => startFakeOpenAI({ apiKey: KEY }), options: (fake) => ({ base_url: fake.url, api_key: KEY }) });
const { provider, call, ask, askStream } = t;

describe("chat (JSON)", () => {
  it("sends the bare model to /v1/chat/completions and maps the reply", async () => {
    const completion = await (await provider()).chat(ask("hello there", { model: "openai/gpt-4o-mini", temperature: null }), call());
    expect(completion).toMatchObject({
      object: "chat.completion",
      model: "gpt-4o-mini",
      choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "Echo: hello there" } }],
      usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 },
    });
    expect(completion.service_tier).toBeUndefined();
    const [request] = t.fake.requests;
    expect(request?.path).toBe("/v1/chat/completions");
    expect(request?.body).toEqual({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hello there" }], stream: false });
    expect(request?.headers).toMatchObject({
      authorization: `Bearer ${KEY}`,
      "content-type": "application/json",
      accept: "application/json",
      "x-client-request-id": "req_test_1",
    });
  });

  it("returns a tool call", async () => {
    const completion = await (await provider()).chat(ask("please use get_weather for Paris", { tools: [weatherTool] }), call());
    expect(completion.choices[0]?.finish_reason).toBe("tool_calls");
    expect(completion.choices[0]?.message.tool_calls).toEqual([
      { id: "call_fake_0", type: "function", function: { name: "get_weather", arguments: JSON.stringify({ input: "please use get_weather for Paris" }) } },
    ]);
  });

  it.each([
    ["without", ""],
    ["with", "/"],
    ["with two", "//"],
  ])("accepts base_url %s a trailing slash", async (_, suffix) => {
    await (await provider({ base_url: t.fake.url + suffix })).chat(ask("x"), call());
    expect(t.fake.requests[0]?.path).toBe("/v1/chat/completions");
  });

  it("sends organization, project and extra headers; extra headers win", async () => {
    const p = await provider({ organization: "org-1", project: "proj-1", headers: { "X-Team": "blue", Accept: "application/json; q=1" } });
    await p.chat(ask("x"), call());
    expect(t.fake.requests[0]?.headers).toMatchObject({ "openai-organization": "org-1", "openai-project": "proj-1", "x-team": "blue", accept: "application/json; q=1" });
  });
});

describe("without api_key (local compatible servers)", () => {
  let open: FakeOpenAI;
  beforeAll(async () => {
    open = await startFakeOpenAI();
  });
  afterAll(() => open.close());

  it.each([[undefined], [""]])("sends no Authorization header when api_key is %j", async (apiKey) => {
    const p = await provider({ base_url: open.url, api_key: apiKey }, { name: "ollama" });
    await p.chat(ask("x"), call({ model: "llama3.1:8b" }));
    expect(open.requests.at(-1)?.headers.authorization).toBeUndefined();
    expect(open.requests.at(-1)?.body?.model).toBe("llama3.1:8b");
  });
});

describe("chatStreamEvents", () => {
  /** The `data:` payloads of a relayed body, read whole. */
  const payloadsOf = async (stream: Promise<ChatEventStream>) =>
    (await (await stream).body.text())
      .split("\n")
      .filter((line) => line.startsWith("data: ") && line !== "data: [DONE]")
      .map((line) => line.slice("data: ".length));

  it("hands the core the upstream's body as it came: its chunks in order, ending with the usage chunk", async () => {
    const payloads = await payloadsOf((await provider()).chatStreamEvents!(askStream("one two three"), call()));
    const chunks = payloads.map((payload) => JSON.parse(payload));
    expect(chunks[0].choices[0].delta.role).toBe("assistant");
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("Echo: one two three");
    expect(chunks.at(-2).choices[0].finish_reason).toBe("stop");
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } });
    expect(t.fake.requests[0]?.headers.accept).toBe("text/event-stream");
    expect(t.fake.requests[0]?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it("sends the tools, so the stream carries tool-call deltas", async () => {
    const payloads = await payloadsOf((await provider()).chatStreamEvents!(askStream("weather?", { tools: [weatherTool], tool_choice: "required" }), call()));
    const deltas = payloads.map((payload) => JSON.parse(payload)).flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(deltas[0]).toEqual({ index: 0, id: "call_fake_0", type: "function", function: { name: "get_weather", arguments: "" } });
    expect(deltas.map((d) => d.function.arguments).join("")).toBe('{"input":"weather?"}');
    expect(t.fake.requests[0]?.body).toMatchObject({ tools: [weatherTool], tool_choice: "required" });
  });

  it("throws the mapped error, with no body, when the upstream refuses", async () => {
    t.fake.setNext({ error: { status: 429, retryAfter: "3" } });
    const error = await rejection((await provider()).chatStreamEvents!(askStream("x"), call()));
    expect(error).toMatchObject({ status: 429, type: "rate_limit_error", headers: { "retry-after": "3" } });
  });

  it("reads an error event with errorOf: the provider's name, the upstream's message, no key", async () => {
    t.fake.setNext({ streamFailure: { afterChunks: 1, mode: "error_event" } });
    const stream = await (await provider({}, { name: "groq" })).chatStreamEvents!(askStream("a b c"), call());
    const text = await stream.body.text();
    const errorData = text.split("\n").find((line) => line.startsWith('data: {"error"'))!.slice("data: ".length);
    const error = stream.errorOf(undefined, errorData) as ModelmuxError;
    expect(error).toBeInstanceOf(ModelmuxError);
    expect(error).toMatchObject({ status: 502, code: "upstream_error" });
    expect(error.message).toMatch(/^groq: /);
    expect(stream.errorOf(undefined, text.split("\n")[0]!.slice("data: ".length))).toBeUndefined();
  });
});

describe("upstream errors", () => {
  it("keeps a 400's status, message, code and param", async () => {
    t.fake.setNext({ error: { status: 400, message: "Invalid schema for function 'get_weather'", code: "invalid_function_parameters", param: "tools[0]" } });
    const error = await rejection((await provider({}, { name: "groq" })).chat(ask("x"), call()));
    expect(error.toEnvelope()).toEqual({
      error: { message: "groq: Invalid schema for function 'get_weather'", type: "invalid_request_error", code: "invalid_function_parameters", param: "tools[0]" },
    });
    expect(error.status).toBe(400);
  });

  it("keeps a 401 without any part of the key in the message", async () => {
    const wrong = "sk-proj-this-is-the-wrong-key-4321";
    const error = await rejection((await provider({ api_key: wrong })).chat(ask("x"), call()));
    expect(error).toMatchObject({ status: 401, type: "invalid_request_error", code: "invalid_api_key" });
    expect(error.message).toContain("Incorrect API key provided");
    expect(error.message).not.toContain("4321");
    expect(error.message).not.toContain("sk-");
  });

  it("maps 429 to rate_limit_error and keeps retry-after", async () => {
    t.fake.setNext({ error: { status: 429, retryAfter: "17" } });
    const error = await rejection((await provider()).chat(ask("x"), call()));
    expect(error).toMatchObject({ status: 429, type: "rate_limit_error", code: "rate_limit_exceeded", headers: { "retry-after": "17" } });
  });

  it.each([500, 503])("maps %i to 502 upstream_error", async (status) => {
    t.fake.setNext({ error: { status } });
    const error = await rejection((await provider()).chat(ask("x"), call()));
    expect(error).toMatchObject({ status: 502, type: "api_error", code: "upstream_error" });
    expect(error.message).toContain(`status ${status}`);
  });

  // A 200 that is not JSON at all is the conformance kit's "answers 502 for a 200 reply that is not the provider's format".
  it("maps a 200 reply that is JSON without choices to 502", async () => {
    t.fake.setNext({ raw: { body: '{"id":"x","object":"chat.completion"}' } });
    const error = await rejection((await provider()).chat(ask("x"), call()));
    expect(error).toMatchObject({ status: 502, code: "upstream_error" });
  });

  it("maps a reply slower than the timeout to 504 upstream_timeout", async () => {
    t.fake.setNext({ delayMs: 3_000 });
    const error = await rejection((await provider()).chat(ask("x"), call({ timeoutMs: 200 })));
    expect(error).toMatchObject({ status: 504, type: "api_error", code: "upstream_timeout" });
    expect((await t.fake.finished(0)).aborted).toBe(true);
  });
});

describe("abort", () => {
  it("aborts the upstream request when the signal fires", async () => {
    t.fake.setNext({ delayMs: 10_000 });
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
    t.fake.setNext({ streamFailure: { afterChunks: 1, mode: "stall" } });
    const controller = new AbortController();
    const { body } = await (await provider()).chatStreamEvents!(askStream("a b"), call({ signal: controller.signal }));
    const reads = body[Symbol.asyncIterator]();
    expect((await reads.next()).done).toBe(false);
    controller.abort();
    await expect(reads.next()).rejects.toMatchObject({ name: "AbortError" });
    expect((await t.fake.finished(0)).aborted).toBe(true);
  });
});

describe("definition", () => {
  it("declares capabilities per model", async () => {
    const p = await provider();
    expect(p.capabilities("gpt-4o").vision).toBe(true);
    expect(p.capabilities("gpt-image-1")).toMatchObject({ images: true, chat: false });
  });
});
