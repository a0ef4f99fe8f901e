/**
 * The fake Responses / images upstream is only useful if it speaks OpenAI's wire format: here the
 * official openai SDK talks to it directly (no router), through every route the fake serves.
 */
import OpenAI, { APIError } from "openai";
import type { ResponseStreamEvent } from "openai/resources/responses/responses";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAIResponses, type FakeOpenAIResponses, weatherTool } from "./fixtures/fake-openai-responses.ts";

const KEY = "sk-fake-responses-123";
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
describe("fake OpenAI Responses upstream, driven by the official SDK", () => {
  let fake: FakeOpenAIResponses;
  let client: OpenAI;

  beforeAll(async () => {
    fake = await startFakeOpenAIResponses({ apiKey: KEY });
    client = new OpenAI({ baseURL: fake.url, apiKey: KEY, maxRetries: 0 });
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  it("answers responses.create with a Response that echoes the request and records the body unchanged", async () => {
    const params = { model: "gpt-4.1-mini", input: "Hello upstream", instructions: "Be brief.", temperature: 0.3, metadata: { team: "a" } };
    const response = await client.responses.create(params);
    expect(response).toMatchObject({ object: "response", status: "completed", model: "gpt-4.1-mini", instructions: "Be brief.", temperature: 0.3, metadata: { team: "a" } });
    expect(response.id).toMatch(/^resp_/);
    expect(response.output_text).toBe("Echo: Hello upstream");
    expect(response.output[0]).toMatchObject({ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Echo: Hello upstream", annotations: [] }] });
    expect(response.usage).toMatchObject({ input_tokens: 4, output_tokens: 3, total_tokens: 7, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } });
    expect(response).toMatchObject({ previous_response_id: null, background: false, tool_choice: "auto", tools: [], store: true, parallel_tool_calls: true });
    const sent = fake.requests[0]!;
    expect(sent).toMatchObject({ method: "POST", path: "/v1/responses" });
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(JSON.parse(sent.rawBody)).toEqual(params);
  });

  it("streams through responses.stream(): the events in order with sequence numbers, and finalResponse()", async () => {
    fake.next({ text: "Hello there, streaming world" });
    const stream = client.responses.stream({ model: "gpt-4.1", input: "Hi" });
    const events: ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    expect(events.map((e) => e.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      ...Array<string>(4).fill("response.output_text.delta"),
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const deltas = events.flatMap((e) => (e.type === "response.output_text.delta" ? [e.delta] : []));
    expect(deltas).toEqual(["Hello ", "there, ", "streaming ", "world"]);
    expect(events[2]).toMatchObject({ output_index: 0, item: { type: "message", status: "in_progress", content: [] } });
    expect(events[4]).toMatchObject({ item_id: events[2]!.type === "response.output_item.added" ? events[2].item.id : "", output_index: 0, content_index: 0 });
    expect(events[0]).toMatchObject({ response: { status: "in_progress", usage: null, output: [] } });
    expect(final.status).toBe("completed");
    expect(final.output_text).toBe("Hello there, streaming world");
    expect(final.usage?.output_tokens).toBe(4);
    expect(JSON.parse(fake.requests[0]!.rawBody)).toEqual({ model: "gpt-4.1", input: "Hi", stream: true });
  });

  it("streams raw events for responses.create({stream: true}), with no [DONE] unless scripted", async () => {
    const stream = await client.responses.create({ model: "gpt-4.1", input: "one two", stream: true });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types.at(0)).toBe("response.created");
    expect(types.at(-1)).toBe("response.completed");

    fake.next({ text: "x" }, { text: "x", done: true });
    const raw = async () => (await fetch(`${fake.url}/responses`, { method: "POST", headers: { authorization: `Bearer ${KEY}` }, body: JSON.stringify({ model: "m", input: "hi", stream: true }) })).text();
    const plain = await raw();
    expect(plain).toMatch(/^event: response\.created\ndata: \{"type":"response\.created","sequence_number":0,/);
    expect(plain.endsWith("event: response.completed\n")).toBe(false);
    expect(plain).not.toContain("[DONE]");
    expect(plain).toContain('"obfuscation":');
    expect(await raw()).toMatch(/\n\ndata: \[DONE\]\n\n$/);
  });

  it("returns function calls, in JSON and streamed, scripted or forced by tool_choice", async () => {
    const forced = await client.responses.create({ model: "gpt-4.1", input: "Paris?", tools: [weatherTool], tool_choice: "required" });
    expect(forced.output).toEqual([expect.objectContaining({ type: "function_call", name: "get_weather", status: "completed", arguments: '{"input":"Paris?"}' })]);
    expect(forced.tools).toEqual([weatherTool]);

    fake.next({ toolCalls: [{ name: "get_weather", arguments: '{"city":"Paris"}', callId: "call_1" }] });
    const stream = client.responses.stream({ model: "gpt-4.1", input: "Weather in Paris?", tools: [weatherTool] });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types.slice(2)).toEqual([
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const final = await stream.finalResponse();
    expect(final.output[0]).toMatchObject({ type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' });

    const answered = await client.responses.create({ model: "gpt-4.1", input: [{ type: "function_call_output", call_id: "call_1", output: "sunny" }], previous_response_id: final.id });
    expect(answered.output_text).toBe("Tool result: sunny");
    expect(answered.previous_response_id).toBe(final.id);
  });

  it("runs a background response: queued, then in_progress and completed over GET polls", async () => {
    fake.next({ text: "Done in the background" });
    const queued = await client.responses.create({ model: "o3", input: "Take your time", background: true });
    expect(queued).toMatchObject({ status: "queued", background: true, output: [], usage: null });
    const first = await client.responses.retrieve(queued.id);
    expect(first.status).toBe("in_progress");
    const second = await client.responses.retrieve(queued.id);
    expect(second.status).toBe("completed");
    expect(second.output_text).toBe("Done in the background");
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/responses", `GET /v1/responses/${queued.id}`, `GET /v1/responses/${queued.id}`]);
  });

  it("cancels background responses only, idempotently, with OpenAI's 400 otherwise", async () => {
    const queued = await client.responses.create({ model: "o3", input: "Long task", background: true });
    expect((await client.responses.cancel(queued.id)).status).toBe("cancelled");
    expect((await client.responses.cancel(queued.id)).status).toBe("cancelled");
    expect((await client.responses.retrieve(queued.id)).status).toBe("cancelled");

    const foreground = await client.responses.create({ model: "o3", input: "Quick" });
    const error = await client.responses.cancel(foreground.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as APIError).error).toMatchObject({ type: "invalid_request_error", param: null, code: null });

    fake.next({ backgroundPolls: 1 });
    const done = await client.responses.create({ model: "o3", input: "Fast", background: true });
    await client.responses.retrieve(done.id);
    await expect(client.responses.cancel(done.id)).rejects.toMatchObject({ status: 400 });
  });

  it("deletes a stored response: {id, object, deleted} on the wire, then 404 in OpenAI's format", async () => {
    const { id } = await client.responses.create({ model: "gpt-4.1", input: "Forget me" });
    // Typed `void` by the SDK, which still hands back the JSON the API sent.
    expect(await client.responses.delete(id)).toEqual({ id, object: "response", deleted: true });
    expect(fake.stored(id)).toBeUndefined();
    const error = await client.responses.retrieve(id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error).toMatchObject({ message: `404 Response with id '${id}' not found.`, type: "invalid_request_error" });
    await expect(client.responses.delete(id)).rejects.toMatchObject({ status: 404 });
  });

  it("lists input items with after/limit/order pagination", async () => {
    const input = ["one", "two", "three", "four", "five"].map((text) => ({ role: "user" as const, content: text }));
    const { id } = await client.responses.create({ model: "gpt-4.1", input });
    const newestFirst = await client.responses.inputItems.list(id, { limit: 2 });
    expect(newestFirst.data.map((item) => (item.type === "message" ? item.content : null))).toEqual([
      [{ type: "input_text", text: "five" }],
      [{ type: "input_text", text: "four" }],
    ]);
    expect(newestFirst.has_more).toBe(true);

    const texts: string[] = [];
    for await (const item of client.responses.inputItems.list(id, { limit: 2, order: "asc" })) {
      expect(item).toMatchObject({ type: "message", role: "user", status: "completed" });
      if (item.type === "message" && item.content[0]?.type === "input_text") texts.push(item.content[0].text);
    }
    expect(texts).toEqual(["one", "two", "three", "four", "five"]);
    const pages = fake.requests.slice(2).map((r) => r.path);
    expect(pages).toEqual([`/v1/responses/${id}/input_items?limit=2&order=asc`, expect.stringContaining("&after=msg_fake_0_in_1"), expect.stringContaining("&after=msg_fake_0_in_3")]);
    const last = await client.responses.inputItems.list(id, { order: "asc", after: "msg_fake_0_in_3" });
    expect(last).toMatchObject({ has_more: false, data: [{ id: "msg_fake_0_in_4" }] });
  });

  it("generates gpt-image-1 images as b64_json PNGs with the gpt-image fields", async () => {
    const reply = await client.images.generate({ model: "gpt-image-1", prompt: "a small otter", n: 2, quality: "low", size: "1024x1536" });
    expect(reply.data).toHaveLength(2);
    expect([...Buffer.from(reply.data![0]!.b64_json!, "base64").subarray(0, 8)]).toEqual(PNG_SIGNATURE);
    expect(reply.data![0]!.url).toBeUndefined();
    expect(reply).toMatchObject({ background: "opaque", output_format: "png", quality: "low", size: "1024x1536" });
    expect(reply.usage).toMatchObject({ input_tokens: 3, input_tokens_details: { text_tokens: 3, image_tokens: 0 }, output_tokens: 544, total_tokens: 547 });
  });

  it("generates dall-e-3 images as urls the fake serves, or as b64_json per response_format", async () => {
    const byUrl = await client.images.generate({ model: "dall-e-3", prompt: "a lighthouse", response_format: "url" });
    const image = byUrl.data![0]!;
    expect(image.url).toMatch(new RegExp(`^${fake.origin}/files/img_fake_0_0\\.png$`));
    expect(image.revised_prompt).toBe("a lighthouse");
    expect(byUrl).not.toHaveProperty("usage");
    const file = await fetch(image.url!);
    expect(file.headers.get("content-type")).toBe("image/png");
    expect([...new Uint8Array(await file.arrayBuffer()).subarray(0, 8)]).toEqual(PNG_SIGNATURE);

    const inline = await client.images.generate({ model: "dall-e-3", prompt: "a lighthouse", response_format: "b64_json" });
    expect(inline.data![0]).toEqual({ revised_prompt: "a lighthouse", b64_json: expect.any(String) });
  });

  it("surfaces scripted errors, a wrong key and a broken stream as the SDK surfaces OpenAI's", async () => {
    fake.next({ error: { status: 429, message: "Slow down.", retryAfter: "3" } });
    const limited = await client.responses.create({ model: "gpt-4.1", input: "hi" }).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(APIError);
    expect(limited).toMatchObject({ status: 429, message: "429 Slow down.", code: "rate_limit_exceeded", type: "requests" });
    expect((limited as APIError).headers?.get("retry-after")).toBe("3");

    const stranger = new OpenAI({ baseURL: fake.url, apiKey: "sk-wrong-key-9999", maxRetries: 0 });
    await expect(stranger.images.generate({ model: "gpt-image-1", prompt: "x" })).rejects.toMatchObject({ status: 401, message: "401 Incorrect API key provided: sk-**********9999." });

    fake.next({ raw: { body: "this is not JSON" } });
    await expect(client.responses.create({ model: "gpt-4.1", input: "hi" })).rejects.toThrow();

    fake.next({ streamFailure: { afterEvents: 3, mode: "error_event" } });
    const types: string[] = [];
    for await (const event of await client.responses.create({ model: "gpt-4.1", input: "hi", stream: true })) types.push(event.type);
    expect(types).toEqual(["response.created", "response.in_progress", "response.output_item.added", "error", "response.failed"]);
  });
});
