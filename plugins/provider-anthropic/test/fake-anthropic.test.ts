/**
 * The fake upstream, read back through the official Anthropic SDK: if the SDK parses its replies
 * and streams, the fake speaks Anthropic's wire format, and the provider tests that rely on it
 * mean something.
 */
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { anthropicRequestReader, startFakeAnthropic, type FakeAnthropic } from "../../../test/fixtures/fake-anthropic.ts";

let fake: FakeAnthropic;
let client: Anthropic;

beforeAll(async () => {
  fake = await startFakeAnthropic({ apiKey: "sk-ant-sdk-test" });
  client = sdk(fake.options.api_key);
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

/**
 * SDK 1.12 sends an API key as `Authorization: Bearer`; the fake, like the plugin, uses the
 * documented `x-api-key`, so the client sends that header instead.
 */
const sdk = (key: string) => new Anthropic({ baseURL: fake.options.base_url, apiKey: null, defaultHeaders: { "x-api-key": key }, maxRetries: 0 });

const ask = { model: "claude-fake-1", max_tokens: 100, messages: [{ role: "user" as const, content: "hi" }] };
const weather = { name: "get_weather", input_schema: { type: "object" as const, properties: { city: { type: "string" } } } };

describe("fake Anthropic upstream, through the official SDK", () => {
  it("answers with the default text, end_turn and the default usage", async () => {
    const message = await client.messages.create(ask);
    expect(message).toMatchObject({ type: "message", role: "assistant", model: "claude-fake-1", stop_reason: "end_turn", usage: { input_tokens: 11, output_tokens: 7 } });
    expect(message.content).toEqual([{ type: "text", text: "Hello from the upstream", citations: null }]);
    const received = fake.requests[0]!;
    expect(received).toMatchObject({ method: "POST", path: "/v1/messages", aborted: false });
    expect(received.headers["x-api-key"]).toBe("sk-ant-sdk-test");
    expect(anthropicRequestReader.model(received)).toBe("claude-fake-1");
    expect(anthropicRequestReader.streamed(received)).toBe(false);
  });

  it("streams text word by word, and the SDK's accumulated message equals the JSON one", async () => {
    const script = { text: "one two three four", usage: { input: 5, output: 4 }, finish: "length" as const };
    fake.next(script);
    const json = await client.messages.create(ask);
    fake.next(script);
    const stream = client.messages.stream({ ...ask, stop_sequences: ["END"] });
    const types: string[] = [];
    stream.on("streamEvent", (event) => types.push(event.type));
    const streamed = await stream.finalMessage();
    expect(streamed.content).toEqual(json.content);
    expect(streamed).toMatchObject({ stop_reason: "max_tokens", usage: { input_tokens: 5, output_tokens: 4 } });
    expect(types.filter((t) => t === "content_block_delta")).toHaveLength(4);
    expect(types[0]).toBe("message_start");
    expect(types.at(-1)).toBe("message_stop");
    expect(anthropicRequestReader.streamed(fake.requests[1]!)).toBe(true);
    expect(anthropicRequestReader.stop(fake.requests[1]!)).toEqual(["END"]);
  });

  it("streams a tool call's input in fragments that the SDK reassembles", async () => {
    fake.next({ toolCall: { id: "toolu_x", name: "get_weather", arguments: '{"city":"Paris","unit":"celsius"}' } });
    const stream = client.messages.stream({ ...ask, tools: [weather] });
    const fragments: string[] = [];
    stream.on("inputJson", (partial) => fragments.push(partial));
    const message = await stream.finalMessage();
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content).toEqual([{ type: "tool_use", id: "toolu_x", name: "get_weather", input: { city: "Paris", unit: "celsius" }, caller: { type: "direct" } }]);
    expect(fragments.filter(Boolean).length).toBeGreaterThanOrEqual(3);
    expect(anthropicRequestReader.toolNames(fake.requests[0]!)).toEqual(["get_weather"]);
  });

  it("maps the neutral finish to Anthropic's stop_reason", async () => {
    fake.next({ text: "x", finish: "stop_sequence" });
    const message = await client.messages.create({ ...ask, stop_sequences: ["###"] });
    expect(message).toMatchObject({ stop_reason: "stop_sequence", stop_sequence: "###" });
  });

  it.each([
    [429, "rate_limit_error", Anthropic.RateLimitError],
    [529, "overloaded_error", Anthropic.InternalServerError],
    [400, "invalid_request_error", Anthropic.BadRequestError],
  ])("replies %i with Anthropic's error body (%s)", async (status, type, kind) => {
    fake.next({ error: { status, message: "no", retryAfter: "3" } });
    const error = (await client.messages.create(ask).catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
    expect(error).toBeInstanceOf(kind);
    expect(error.status).toBe(status);
    expect(error.error).toMatchObject({ type: "error", error: { type, message: "no" } });
    expect(error.headers?.get("retry-after")).toBe("3");
  });

  it("checks x-api-key and anthropic-version like the real API", async () => {
    const wrong = sdk("sk-ant-wrong");
    await expect(wrong.messages.create(ask)).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    const res = await fetch(`${fake.options.base_url}/v1/messages`, { method: "POST", headers: { "x-api-key": fake.options.api_key }, body: JSON.stringify(ask) });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { type: "invalid_request_error", message: "anthropic-version: header is required" } });
  });
});
