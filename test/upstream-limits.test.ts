/**
 * What the router takes from an upstream (README, Errors and Configuration): at most
 * `server.upstream_body_limit` of one reply (a JSON body, an error body, one SSE event), and at
 * most the provider's `timeout` for a whole JSON reply or for a stream's first event. Past either,
 * the client gets 502 `upstream_error` naming the key, or 504 `upstream_timeout` (before the first
 * byte of a stream: as the reply's status; after it: as the stream's error event), the access log
 * has its line, and the upstream connection is closed rather than read on.
 *
 * The upstream is a fake that misbehaves on a real port (`fake-misbehaving-upstream.ts`); the
 * router serves on a real port, and the official openai SDK (no retries) is the client. One
 * transport only: everything under test happens between the router and the upstream.
 */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../core/src/logger.ts";
import {
  ANTHROPIC_DELTA_HEAD,
  CHAT_CHUNK_HEAD,
  CHAT_COMPLETION_HEAD,
  chatChunkEvent,
  chatCompletionJson,
  MESSAGE_START_EVENT,
  RESPONSE_CREATED_EVENT,
  RESPONSE_DELTA_HEAD,
  responseJson,
  startMisbehavingUpstream,
  type MisbehavingUpstream,
} from "./fixtures/fake-misbehaving-upstream.ts";
import { startHarness, testConfig, type Harness } from "./helpers/harness.ts";
import { sleep, within } from "./helpers/wait.ts";

const LIMIT = 256 * 1024;
/** What the router may read past the limit: the rest of the socket read that crossed it. */
const A_LITTLE = 256 * 1024;
/** What the kernel's socket buffers on loopback can hold besides what the router read (see http-client.test.ts). */
const SOCKET_BUFFERS = 8 * 1024 * 1024;
const JSON_TYPE = "application/json";
const SSE_TYPE = "text/event-stream";
/** Well past the 1 s timeout, well short of what a drip takes to the end (tens of seconds). */
const PROMPT = 6_000;

let fake: MisbehavingUpstream;
let h: Harness;
const log: Array<Record<string, unknown>> = [];

/** Body bytes the router's HTTP client received from the fake since the last test (undici reports each chunk). */
let received = 0;
const BODY_CHUNK = "undici:request:bodyChunkReceived";
function countChunk(message: unknown): void {
  const { request, chunk } = message as { request: { origin?: unknown }; chunk: Buffer };
  if (String(request.origin) === fake.url) received += chunk.length;
}

beforeAll(async () => {
  fake = await startMisbehavingUpstream();
  const providers = {
    openai: { plugin: "provider-openai", base_url: `${fake.url}/v1`, api_key: "sk-upstream", models: ["gpt-4o-mini", "gpt-4.1"], timeout: "1s" },
    anthropic: { plugin: "provider-anthropic", base_url: fake.url, api_key: "sk-ant-upstream", models: ["claude-sonnet-4-5"], timeout: "1s" },
    // No limit on the wait.
    patient: { plugin: "provider-openai", base_url: `${fake.url}/v1`, api_key: "sk-upstream", models: ["gpt-4o-mini"], timeout: 0 },
  };
  subscribe(BODY_CHUNK, countChunk);
  h = await startHarness(testConfig(providers, { server: { upstream_body_limit: "256kb" }, responses: { provider: "openai" } }), "http", {
    logger: createLogger({ level: "info", format: "json", write: (text) => void log.push(...text.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>)) }),
  });
});
beforeEach(() => {
  fake.requests.length = 0;
  received = 0;
});
afterAll(async () => {
  unsubscribe(BODY_CHUNK, countChunk);
  await h?.close();
  await fake?.close();
});

const ask = { model: "openai/gpt-4o-mini", messages: [{ role: "user" as const, content: "hi" }] };
let ids = 0;
/** A request id to find the request's access-log line by. */
const nextId = () => `limits-${++ids}`;

async function failure(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await promise.then(
    () => expect.fail("expected the call to fail"),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  return error as InstanceType<typeof OpenAI.APIError>;
}

/** Reads a stream with the SDK; what came before its error, and the error. */
async function readStream(stream: AsyncIterable<unknown>): Promise<{ items: unknown[]; error: unknown }> {
  const items: unknown[] = [];
  try {
    for await (const item of stream) items.push(item);
  } catch (error) {
    return { items, error };
  }
  return { items, error: undefined };
}

/** The request's connection to the upstream closes soon: resolves with the bytes the upstream had written. */
async function closedSoon(index = 0): Promise<number> {
  const request = fake.requests[index];
  expect(request).toBeDefined();
  const outcome = await within(request!.closed, 3_000);
  expect(outcome, "the upstream connection stayed open").toBeDefined();
  return outcome!.bytesWritten;
}

/**
 * For an upstream that would send forever: the router read about the limit and no more, and closed
 * the connection; the upstream wrote that plus what the sockets hold, then could write no more.
 */
async function cutAtTheLimit(): Promise<void> {
  const written = await closedSoon();
  expect(received).toBeGreaterThan(LIMIT);
  expect(received).toBeLessThan(LIMIT + A_LITTLE);
  expect(written).toBeLessThan(LIMIT + SOCKET_BUFFERS);
}

/** The access-log line of request `id`, once the logger has written it. */
async function accessLine(id: string): Promise<Record<string, unknown> | undefined> {
  h.router.logger.flush();
  await sleep(50);
  h.router.logger.flush();
  return log.find((record) => record.request_id === id && record.status !== undefined);
}

const NAMES_THE_LIMIT = /Provider 'openai' sent a (reply|stream event) larger than the limit of 262144 bytes \(server\.upstream_body_limit\)/;

describe("server.upstream_body_limit", () => {
  it("answers a JSON reply under the limit as usual", async () => {
    fake.next({ contentType: JSON_TYPE, head: chatCompletionJson(200 * 1024) });
    const completion = await h.openai.chat.completions.create(ask);
    expect(completion.choices[0]?.message.content).toHaveLength(200 * 1024);
  });

  it("refuses a JSON reply over the limit that says its length: 502 naming the key, its value and the provider", async () => {
    const body = chatCompletionJson(1024 * 1024);
    fake.next({ contentType: JSON_TYPE, contentLength: Buffer.byteLength(body), head: body });
    const id = nextId();
    const error = await failure(h.openai.chat.completions.create(ask, { headers: { "x-request-id": id } }));
    expect(error.status).toBe(502);
    expect(error.code).toBe("upstream_error");
    expect(error.message).toMatch(NAMES_THE_LIMIT);
    await closedSoon();
    // Refused on its content-length, before the body was read.
    expect(received).toBeLessThan(LIMIT);
    expect(await accessLine(id)).toMatchObject({ status: 502 });
  });

  it("refuses a chunked JSON reply over the limit the same way", async () => {
    fake.next({ contentType: JSON_TYPE, head: chatCompletionJson(1024 * 1024) });
    const error = await failure(h.openai.chat.completions.create(ask));
    expect(error.status).toBe(502);
    expect(error.message).toMatch(NAMES_THE_LIMIT);
    await closedSoon();
  });

  it("stops reading a JSON reply that never ends at the limit and closes its connection", async () => {
    fake.next({ contentType: JSON_TYPE, head: CHAT_COMPLETION_HEAD, rest: { endless: true } });
    const id = nextId();
    const error = await failure(h.openai.chat.completions.create(ask, { headers: { "x-request-id": id } }));
    expect(error.status).toBe(502);
    expect(error.message).toMatch(NAMES_THE_LIMIT);
    await cutAtTheLimit();
    expect(await accessLine(id)).toMatchObject({ status: 502 });
  });

  it("answers an error reply whose body never ends with 502 naming the limit, and closes its connection", async () => {
    fake.next({ status: 500, contentType: JSON_TYPE, head: '{"error":{"message":"', rest: { endless: true } });
    const id = nextId();
    const error = await failure(h.openai.chat.completions.create(ask, { headers: { "x-request-id": id } }));
    expect(error.status).toBe(502);
    expect(error.message).toMatch(NAMES_THE_LIMIT);
    await cutAtTheLimit();
    expect(await accessLine(id)).toMatchObject({ status: 502 });
  });

  it("answers a stream whose first event outgrows the limit with a 502 reply", async () => {
    fake.next({ contentType: SSE_TYPE, head: CHAT_CHUNK_HEAD, rest: { endless: true } });
    const id = nextId();
    const error = await failure(h.openai.chat.completions.create({ ...ask, stream: true }, { headers: { "x-request-id": id } }));
    expect(error.status).toBe(502);
    expect(error.message).toMatch(NAMES_THE_LIMIT);
    await cutAtTheLimit();
    expect(await accessLine(id)).toMatchObject({ status: 502 });
  });

  it("ends a stream with its error event when a later event outgrows the limit", async () => {
    fake.next({ contentType: SSE_TYPE, head: chatChunkEvent("Hel") + CHAT_CHUNK_HEAD, rest: { endless: true } });
    const stream = await h.openai.chat.completions.create({ ...ask, stream: true });
    const { items, error } = await readStream(stream);
    expect(items).toHaveLength(1);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as Error).message).toMatch(NAMES_THE_LIMIT);
    await cutAtTheLimit();
  });

  it("holds a stream read event by event (anthropic) to the same limit", async () => {
    fake.next({ contentType: SSE_TYPE, head: MESSAGE_START_EVENT + ANTHROPIC_DELTA_HEAD, rest: { endless: true } });
    const stream = await h.openai.chat.completions.create({ ...ask, model: "anthropic/claude-sonnet-4-5", stream: true });
    const { items, error } = await readStream(stream);
    expect(items).toHaveLength(1);
    expect((error as Error).message).toMatch(/Provider 'anthropic' sent a stream event larger than the limit of 262144 bytes \(server\.upstream_body_limit\)/);
    await cutAtTheLimit();
  });

  it("refuses a /v1/responses JSON reply over the limit", async () => {
    fake.next({ contentType: JSON_TYPE, head: responseJson(1024 * 1024) });
    const error = await failure(h.openai.responses.create({ model: "openai/gpt-4.1", input: "hi" }));
    expect(error.status).toBe(502);
    expect(error.message).toMatch(NAMES_THE_LIMIT);
    await closedSoon();
  });

  it("refuses a /v1/responses JSON reply over the limit that says its length before reading its body", async () => {
    const body = responseJson(1024 * 1024);
    fake.next({ contentType: JSON_TYPE, contentLength: Buffer.byteLength(body), head: body });
    const error = await failure(h.openai.responses.create({ model: "openai/gpt-4.1", input: "hi" }));
    expect(error.status).toBe(502);
    expect(error.message).toMatch(NAMES_THE_LIMIT);
    await closedSoon();
    expect(received).toBeLessThan(LIMIT);
  });

  it("ends a /v1/responses stream with its error event when an event outgrows the limit", async () => {
    fake.next({ contentType: SSE_TYPE, head: RESPONSE_CREATED_EVENT + RESPONSE_DELTA_HEAD, rest: { endless: true } });
    const stream = await h.openai.responses.create({ model: "openai/gpt-4.1", input: "hi", stream: true });
    const { items, error } = await readStream(stream);
    expect(items).toMatchObject([{ type: "response.created" }]);
    expect(String((error as Error | undefined)?.message)).toMatch(NAMES_THE_LIMIT);
    await cutAtTheLimit();
  });
});

describe("timeout bounds the whole wait", () => {
  const drip = (text: string) => ({ drip: text, everyMs: 100 });

  it("cuts a JSON reply dripped a byte at a time at the timeout: 504, connection closed", async () => {
    fake.next({ contentType: JSON_TYPE, rest: drip(chatCompletionJson(300)) });
    const id = nextId();
    const started = Date.now();
    const error = await failure(h.openai.chat.completions.create(ask, { headers: { "x-request-id": id } }));
    expect(error.status).toBe(504);
    expect(error.code).toBe("upstream_timeout");
    expect(Date.now() - started).toBeLessThan(PROMPT);
    await closedSoon();
    expect(await accessLine(id)).toMatchObject({ status: 504 });
  });

  it("answers 504 before the first byte when a stream's first event drips", async () => {
    fake.next({ contentType: SSE_TYPE, rest: drip(chatChunkEvent("Hello there, this first event drips a byte every 100 ms")) });
    const started = Date.now();
    const error = await failure(h.openai.chat.completions.create({ ...ask, stream: true }));
    expect(error.status).toBe(504);
    expect(error.code).toBe("upstream_timeout");
    expect(Date.now() - started).toBeLessThan(PROMPT);
    await closedSoon();
  });

  it("answers 504 before the first byte when a stream read event by event (anthropic) drips its first event", async () => {
    fake.next({ contentType: SSE_TYPE, rest: drip(MESSAGE_START_EVENT) });
    const started = Date.now();
    const error = await failure(h.openai.chat.completions.create({ ...ask, model: "anthropic/claude-sonnet-4-5", stream: true }));
    expect(error.status).toBe(504);
    expect(Date.now() - started).toBeLessThan(PROMPT);
    await closedSoon();
  });

  it("answers 504 before the first byte when a /v1/responses stream drips its first event", async () => {
    fake.next({ contentType: SSE_TYPE, rest: drip(RESPONSE_CREATED_EVENT) });
    const started = Date.now();
    const error = await failure(h.openai.responses.create({ model: "openai/gpt-4.1", input: "hi", stream: true }));
    expect(error.status).toBe(504);
    expect(error.code).toBe("upstream_timeout");
    expect(Date.now() - started).toBeLessThan(PROMPT);
    await closedSoon();
  });

  it("lets a stream run past the timeout once its first event is in, each gap shorter than the timeout", async () => {
    // About 2.4 s in all, twice the timeout; no gap longer than 0.3 s.
    const events = [...Array.from({ length: 8 }, (_, i) => chatChunkEvent(`w${i} `, i === 7 ? "stop" : null)), "data: [DONE]\n\n"];
    fake.next({ contentType: SSE_TYPE, head: chatChunkEvent("start "), rest: { paced: events, everyMs: 300 } });
    const stream = await h.openai.chat.completions.create({ ...ask, stream: true });
    const { items, error } = await readStream(stream);
    expect(error).toBeUndefined();
    expect(items).toHaveLength(9);
  });

  it("does not take a keep-alive comment for a first event: a stream of comments only is a 504, on both relays", async () => {
    // OpenRouter's keep-alives, every 100 ms for 3 s: never silent, never an event.
    const keepAlives = () => ({ contentType: SSE_TYPE, head: ": OPENROUTER PROCESSING\n\n", rest: { paced: Array<string>(30).fill(": OPENROUTER PROCESSING\n\n"), everyMs: 100 } });
    fake.next(keepAlives());
    const responses = await failure(h.openai.responses.create({ model: "openai/gpt-4.1", input: "hi", stream: true }));
    expect(responses.status).toBe(504);
    expect(responses.code).toBe("upstream_timeout");
    await closedSoon();
    fake.requests.length = 0;
    fake.next(keepAlives());
    const chat = await failure(h.openai.chat.completions.create({ ...ask, stream: true }));
    expect(chat.status).toBe(504);
    await closedSoon();
  });

  it("ends a /v1/responses stream cut off mid-event with the error event, the half event dropped", async () => {
    fake.next({ contentType: SSE_TYPE, head: RESPONSE_CREATED_EVENT + RESPONSE_DELTA_HEAD + "half-ev", rest: { end: true } });
    const stream = await h.openai.responses.create({ model: "openai/gpt-4.1", input: "hi", stream: true });
    const { items, error } = await readStream(stream);
    expect(items).toMatchObject([{ type: "response.created" }]);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as Error).message).toMatch(/openai: the upstream stream ended before its terminal event/);
  });

  it("takes a timeout of 0 as no limit: a JSON reply that takes longer than a second is answered", async () => {
    const body = chatCompletionJson(10);
    fake.next({ contentType: JSON_TYPE, head: body.slice(0, 40), rest: { paced: [body.slice(40)], everyMs: 1_500 } });
    const completion = await h.openai.chat.completions.create({ ...ask, model: "patient/gpt-4o-mini" });
    expect(completion.choices[0]?.message.content).toHaveLength(10);
  });

  it("still ends a stream that stalls after its first event with the 504 error event", async () => {
    fake.next({ contentType: SSE_TYPE, head: chatChunkEvent("Hel"), rest: { stall: true } });
    const stream = await h.openai.chat.completions.create({ ...ask, stream: true });
    const { items, error } = await readStream(stream);
    expect(items).toHaveLength(1);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as Error).message).toMatch(/did not answer within its timeout of 1s/);
    await closedSoon();
  });
});
