/**
 * The fake upstream, read back through the official OpenAI SDK: if the SDK parses its replies, the
 * fake speaks OpenAI's wire format, and the provider tests that rely on it mean something.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "../../../test/fixtures/fake-openai.ts";

const KEY = "sk-fake-test-key-0000";
let fake: FakeOpenAI;
let client: OpenAI;

beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: KEY });
  client = new OpenAI({ baseURL: fake.url, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const weatherTool = { type: "function" as const, function: { name: "get_weather", parameters: { type: "object", properties: { input: { type: "string" } } } } };

describe("fake OpenAI upstream, through the official SDK", () => {
  it("echoes the last message and reports usage", async () => {
    const completion = await client.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hello there" }] });
    expect(completion.choices[0]?.message.content).toBe("Echo: hello there");
    expect(completion.usage).toEqual({ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 });
    expect(fake.requests[0]).toMatchObject({ method: "POST", path: "/v1/chat/completions", aborted: false });
    expect(fake.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it("calls a tool the user names, then answers with the tool's result", async () => {
    const completion = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "use get_weather" }], tools: [weatherTool] });
    const call = completion.choices[0]?.message.tool_calls?.[0];
    expect(completion.choices[0]?.finish_reason).toBe("tool_calls");
    expect(call?.type === "function" && call.function).toEqual({ name: "get_weather", arguments: '{"input":"use get_weather"}' });
    const next = await client.chat.completions.create({
      model: "m",
      tools: [weatherTool],
      messages: [{ role: "user", content: "use get_weather" }, completion.choices[0]!.message, { role: "tool", tool_call_id: call!.id, content: "sunny" }],
    });
    expect(next.choices[0]?.message.content).toBe("Tool result: sunny");
  });

  it("streams text and tool calls that the SDK's stream helper reassembles", async () => {
    const text = await client.chat.completions.stream({ model: "m", messages: [{ role: "user", content: "a b c" }], stream_options: { include_usage: true } }).finalChatCompletion();
    expect(text.choices[0]?.message.content).toBe("Echo: a b c");
    expect(text.usage?.total_tokens).toBe(7);
    const tool = await client.chat.completions
      .stream({ model: "m", messages: [{ role: "user", content: "weather?" }], tools: [weatherTool], tool_choice: "required" })
      .finalChatCompletion();
    const call = tool.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === "function" && call.function.arguments).toBe('{"input":"weather?"}');
  });

  it("answers a wrong key with OpenAI's 401", async () => {
    const bad = new OpenAI({ baseURL: fake.url, apiKey: "sk-wrong-key-1234", maxRetries: 0 });
    const error = await bad.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(error).toMatchObject({ status: 401, code: "invalid_api_key" });
  });

  it("replies scripted errors with OpenAI's body and retry-after", async () => {
    fake.setNext({ error: { status: 429, retryAfter: "7" } });
    const error = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).headers.get("retry-after")).toBe("7");
  });

  it("records a request the client gave up on as aborted", async () => {
    fake.setNext({ delayMs: 10_000 });
    const controller = new AbortController();
    const pending = client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] }, { signal: controller.signal }).catch(() => "aborted");
    while (fake.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    expect(await pending).toBe("aborted");
    expect((await fake.finished(0)).aborted).toBe(true);
  });
});
