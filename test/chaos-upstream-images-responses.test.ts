/**
 * The chaos upstream (test/helpers/chaos-upstream.ts) speaks OpenAI's Responses API and image
 * generation exactly: the official `openai` client (no retries) reads its answers and raises
 * `APIError` for its errors; raw SSE reads check the responses stream's event order, its
 * `sequence_number`s, its error event and what a cut or `noDone` leaves out.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FAKE_PNG_BASE64 } from "./fixtures/fake-openai-responses.ts";
import { answerText, CHAOS_ERRORS, startChaosUpstream, type ChaosUpstream } from "./helpers/chaos-upstream.ts";

let up: ChaosUpstream;
let openai: OpenAI;

beforeAll(async () => {
  up = await startChaosUpstream();
  openai = new OpenAI({ baseURL: up.openaiBaseUrl, apiKey: "sk-chaos", maxRetries: 0, timeout: 5000 });
});
beforeEach(() => up.reset());
afterAll(() => up.close());

/** The SSE events of a streamed response, read raw up to its end or its break. */
async function rawResponseEvents(): Promise<EventSourceMessage[]> {
  const response = await fetch(`${up.openaiBaseUrl}/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-4o", input: "count", stream: true }),
    signal: AbortSignal.timeout(5000),
  });
  expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => void events.push(event) });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read()) parser.feed(read.value);
  } catch {
    // A cut stream: the events read so far are what it sent.
  }
  return events;
}

const typesOf = (events: EventSourceMessage[]) => events.map((event) => event.event);

/** The SDK's error of a call that must fail. */
async function apiError(call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (error instanceof OpenAI.APIError) return error;
  throw new Error(`expected an APIError, got ${String(error)}`);
}

describe("responses", () => {
  it("answers a response object with the deterministic tokens and records the attempt", async () => {
    const response = await openai.responses.create({ model: "gpt-4o", input: "count" });
    expect(response).toMatchObject({ id: "resp_chaos_0", object: "response", status: "completed", model: "gpt-4o", usage: { input_tokens: 10, output_tokens: 8, total_tokens: 18 } });
    expect(response.output_text).toBe(answerText(8));
    expect(up.attempts).toEqual([expect.objectContaining({ path: "/v1/responses", behaviour: "ok", status: 200, sent: answerText(8) })]);
  });

  it("streams the Responses API's events in order, numbered from 0, with no [DONE]", async () => {
    up.script({ ok: true, tokens: 2 });
    const final = await openai.responses.stream({ model: "gpt-4o", input: "count" }).finalResponse();
    expect(final).toMatchObject({ id: "resp_chaos_0", status: "completed", output_text: "t0 t1", usage: { output_tokens: 2 } });
    up.script({ ok: true, tokens: 2 });
    const events = await rawResponseEvents();
    expect(typesOf(events)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const data = events.map((event) => JSON.parse(event.data) as { type: string; sequence_number: number });
    expect(data.map((d) => d.sequence_number)).toEqual(data.map((_, i) => i));
    expect(data.every((d, i) => d.type === events[i]!.event)).toBe(true);
  });

  it("an errorAfter ends the stream with the error event, numbered after the events sent", async () => {
    up.script({ errorAfter: 3 });
    const events = await rawResponseEvents();
    expect(typesOf(events).filter((type) => type === "response.output_text.delta")).toHaveLength(3);
    expect(events.at(-1)!.event).toBe("error");
    expect(JSON.parse(events.at(-1)!.data)).toEqual({ type: "error", sequence_number: events.length - 1, code: "server_error", message: expect.stringContaining("overloaded"), param: null });
    expect(up.attempts[0]!.sent).toBe("t0 t1 t2");
  });

  it("a cutAfter or a noDone leaves out response.completed; the SDK fails on the cut", async () => {
    up.script({ cutAfter: 2 }, { noDone: true });
    const cut = await rawResponseEvents();
    expect(typesOf(cut)).not.toContain("response.completed");
    expect(typesOf(cut).filter((type) => type === "response.output_text.delta")).toHaveLength(2);
    const noDone = await rawResponseEvents();
    expect(typesOf(noDone).at(-1)).toBe("response.output_item.done");
    up.script({ cutAfter: 2 });
    await expect(openai.responses.stream({ model: "gpt-4o", input: "count" }).finalResponse()).rejects.toThrow();
  });

  it("answers the scripted errors with OpenAI's body and retry headers", async () => {
    up.script({ ...CHAOS_ERRORS.rateLimit, retryAfter: "2" }, CHAOS_ERRORS.serverError);
    const limited = await apiError(openai.responses.create({ model: "gpt-4o", input: "count" }));
    expect(limited).toMatchObject({ status: 429, code: "rate_limit_exceeded" });
    expect(limited.headers?.get("retry-after")).toBe("2");
    expect(await apiError(openai.responses.create({ model: "gpt-4o", input: "count", stream: true }))).toMatchObject({ status: 500, type: "server_error" });
    expect(up.attempts.map((a) => [a.behaviour, a.status])).toEqual([
      ["status", 429],
      ["status", 500],
    ]);
  });
});

describe("images", () => {
  it("answers dall-e-3's b64_json reply, its revised_prompt the deterministic tokens", async () => {
    const reply = await openai.images.generate({ model: "dall-e-3", prompt: "a cat", response_format: "b64_json" });
    expect(reply.data).toEqual([{ b64_json: FAKE_PNG_BASE64, revised_prompt: answerText(8) }]);
    expect(up.attempts).toEqual([expect.objectContaining({ path: "/v1/images/generations", behaviour: "ok", status: 200 })]);
  });

  it("answers the scripted errors and refuses a body without a prompt, as OpenAI does", async () => {
    up.script(CHAOS_ERRORS.unavailable, CHAOS_ERRORS.contentPolicy);
    expect(await apiError(openai.images.generate({ model: "dall-e-3", prompt: "a cat" }))).toMatchObject({ status: 503 });
    expect(await apiError(openai.images.generate({ model: "dall-e-3", prompt: "a cat" }))).toMatchObject({ status: 400, code: "content_policy_violation" });
    const refused = await fetch(`${up.openaiBaseUrl}/images/generations`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"model":"dall-e-3"}' });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: { message: "Missing required parameter: 'prompt'.", type: "invalid_request_error" } });
  });

  it("resets the connection before any reply byte, as scripted", async () => {
    up.script("reset");
    await expect(openai.images.generate({ model: "dall-e-3", prompt: "a cat" })).rejects.toThrow(OpenAI.APIConnectionError);
    expect(up.attempts.map((a) => a.behaviour)).toEqual(["reset"]);
  });
});
