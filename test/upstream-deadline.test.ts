/**
 * A provider's `timeout` bounds the whole wait (README, Errors and Configuration): for a JSON reply
 * all of it, for a stream its headers and first event (a comment is not one); after that, each gap.
 * Past it, the client gets 504 `upstream_timeout` (before the first byte of a stream: as the
 * reply's status; after it: as the stream's error event), the access log has its line, and the
 * upstream connection is closed. A timeout of 0 is no limit.
 *
 * The upstream is a fake that drips, paces and stalls on a real port; the router serves on a real
 * port, and the official openai SDK is the client (`helpers/misbehaving-router.ts`).
 */
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { chatChunkEvent, chatCompletionJson, MESSAGE_START_EVENT, RESPONSE_CREATED_EVENT, RESPONSE_DELTA_HEAD } from "./fixtures/fake-misbehaving-upstream.ts";
import { ask, failure, JSON_TYPE, readStream, SSE_TYPE, useMisbehavingRouter } from "./helpers/misbehaving-router.ts";

/** Well past the 1 s timeout, well short of what a drip takes to the end (tens of seconds). */
const PROMPT = 6_000;

const t = useMisbehavingRouter();

describe("timeout bounds the whole wait", () => {
  const drip = (text: string) => ({ drip: text, everyMs: 100 });

  it("cuts a JSON reply dripped a byte at a time at the timeout: 504, connection closed", async () => {
    t.fake.next({ contentType: JSON_TYPE, rest: drip(chatCompletionJson(300)) });
    const id = t.nextId();
    const started = Date.now();
    const error = await failure(t.h.openai.chat.completions.create(ask, { headers: { "x-request-id": id } }));
    expect(error.status).toBe(504);
    expect(error.code).toBe("upstream_timeout");
    expect(Date.now() - started).toBeLessThan(PROMPT);
    await t.closedSoon();
    expect(await t.accessLine(id)).toMatchObject({ status: 504 });
  });

  it("answers 504 before the first byte when a stream's first event drips", async () => {
    t.fake.next({ contentType: SSE_TYPE, rest: drip(chatChunkEvent("Hello there, this first event drips a byte every 100 ms")) });
    const started = Date.now();
    const error = await failure(t.h.openai.chat.completions.create({ ...ask, stream: true }));
    expect(error.status).toBe(504);
    expect(error.code).toBe("upstream_timeout");
    expect(Date.now() - started).toBeLessThan(PROMPT);
    await t.closedSoon();
  });

  it("answers 504 before the first byte when a stream read event by event (anthropic) drips its first event", async () => {
    t.fake.next({ contentType: SSE_TYPE, rest: drip(MESSAGE_START_EVENT) });
    const started = Date.now();
    const error = await failure(t.h.openai.chat.completions.create({ ...ask, model: "anthropic/claude-sonnet-4-5", stream: true }));
    expect(error.status).toBe(504);
    expect(Date.now() - started).toBeLessThan(PROMPT);
    await t.closedSoon();
  });

  it("answers 504 before the first byte when a /v1/responses stream drips its first event", async () => {
    t.fake.next({ contentType: SSE_TYPE, rest: drip(RESPONSE_CREATED_EVENT) });
    const started = Date.now();
    const error = await failure(t.h.openai.responses.create({ model: "openai/gpt-4.1", input: "hi", stream: true }));
    expect(error.status).toBe(504);
    expect(error.code).toBe("upstream_timeout");
    expect(Date.now() - started).toBeLessThan(PROMPT);
    await t.closedSoon();
  });

  it("lets a stream run past the timeout once its first event is in, each gap shorter than the timeout", async () => {
    // About 2.4 s in all, twice the timeout; no gap longer than 0.3 s.
    const events = [...Array.from({ length: 8 }, (_, i) => chatChunkEvent(`w${i} `, i === 7 ? "stop" : null)), "data: [DONE]\n\n"];
    t.fake.next({ contentType: SSE_TYPE, body: chatChunkEvent("start "), rest: { paced: events, everyMs: 300 } });
    const stream = await t.h.openai.chat.completions.create({ ...ask, stream: true });
    const { items, error } = await readStream(stream);
    expect(error).toBeUndefined();
    expect(items).toHaveLength(9);
  });

  it("does not take a keep-alive comment for a first event: a stream of comments only is a 504, on both relays", async () => {
    // OpenRouter's keep-alives, every 100 ms for 3 s: never silent, never an event.
    const keepAlives = () => ({ contentType: SSE_TYPE, body: ": OPENROUTER PROCESSING\n\n", rest: { paced: Array<string>(30).fill(": OPENROUTER PROCESSING\n\n"), everyMs: 100 } });
    t.fake.next(keepAlives());
    const responses = await failure(t.h.openai.responses.create({ model: "openai/gpt-4.1", input: "hi", stream: true }));
    expect(responses.status).toBe(504);
    expect(responses.code).toBe("upstream_timeout");
    await t.closedSoon(0);
    t.fake.next(keepAlives());
    const chat = await failure(t.h.openai.chat.completions.create({ ...ask, stream: true }));
    expect(chat.status).toBe(504);
    await t.closedSoon(1);
  });

  it("ends a /v1/responses stream cut off mid-event with the error event, the half event dropped", async () => {
    t.fake.next({ contentType: SSE_TYPE, body: RESPONSE_CREATED_EVENT + RESPONSE_DELTA_HEAD + "half-ev", rest: { end: true } });
    const stream = await t.h.openai.responses.create({ model: "openai/gpt-4.1", input: "hi", stream: true });
    const { items, error } = await readStream(stream);
    expect(items).toMatchObject([{ type: "response.created" }]);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as Error).message).toMatch(/openai: the upstream stream ended before its terminal event/);
  });

  it("takes a timeout of 0 as no limit: a JSON reply that takes longer than a second is answered", async () => {
    const body = chatCompletionJson(10);
    t.fake.next({ contentType: JSON_TYPE, body: body.slice(0, 40), rest: { paced: [body.slice(40)], everyMs: 1_500 } });
    const completion = await t.h.openai.chat.completions.create({ ...ask, model: "patient/gpt-4o-mini" });
    expect(completion.choices[0]?.message.content).toHaveLength(10);
  });

  it("still ends a stream that stalls after its first event with the 504 error event", async () => {
    t.fake.next({ contentType: SSE_TYPE, body: chatChunkEvent("Hel"), rest: { stall: true } });
    const stream = await t.h.openai.chat.completions.create({ ...ask, stream: true });
    const { items, error } = await readStream(stream);
    expect(items).toHaveLength(1);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as Error).message).toMatch(/did not answer within its timeout of 1s/);
    await t.closedSoon();
  });
});
