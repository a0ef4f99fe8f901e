/**
 * `server.upstream_body_limit` (README, Errors and Configuration): the router buffers at most that
 * much of one upstream reply (a JSON body, an error body, one SSE event). Past it, the client gets
 * 502 `upstream_error` naming the key (before the first byte of a stream: as the reply's status;
 * after it: as the stream's error event), the access log has its line, and the upstream connection
 * is closed rather than read on.
 *
 * The upstream is a fake that misbehaves on a real port; the router serves on a real port, and
 * the official openai SDK is the client (`helpers/misbehaving-router.ts`). One transport only:
 * everything under test happens between the router and the upstream.
 */
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
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
} from "./fixtures/fake-misbehaving-upstream.ts";
import { ask, failure, JSON_TYPE, LIMIT, readStream, SSE_TYPE, useMisbehavingRouter } from "./helpers/misbehaving-router.ts";

/** What the router may read past the limit: the rest of the socket read that crossed it. */
const A_LITTLE = 256 * 1024;
/** What the kernel's socket buffers on loopback can hold besides what the router read (see the slow reader in core/test/upstream-client.test.ts). */
const SOCKET_BUFFERS = 8 * 1024 * 1024;
const NAMES_THE_LIMIT = /Provider 'openai' sent a (reply|stream event) larger than the limit of 262144 bytes \(server\.upstream_body_limit\)/;

const t = useMisbehavingRouter();

/**
 * For an upstream that would send forever: the router read about the limit and no more, and closed
 * the connection; the upstream wrote that plus what the sockets hold, then could write no more.
 */
async function cutAtTheLimit(): Promise<void> {
  const written = await t.closedSoon();
  expect(t.received).toBeGreaterThan(LIMIT);
  expect(t.received).toBeLessThan(LIMIT + A_LITTLE);
  expect(written).toBeLessThan(LIMIT + SOCKET_BUFFERS);
}

describe("server.upstream_body_limit", () => {
  it("answers a JSON reply under the limit as usual", async () => {
    t.fake.next({ contentType: JSON_TYPE, body: chatCompletionJson(200 * 1024) });
    const completion = await t.h.openai.chat.completions.create(ask);
    expect(completion.choices[0]?.message.content).toHaveLength(200 * 1024);
  });

  it("refuses a JSON reply over the limit that says its length: 502 naming the key, its value and the provider", async () => {
    const body = chatCompletionJson(1024 * 1024);
    t.fake.next({ contentType: JSON_TYPE, contentLength: Buffer.byteLength(body), body: body });
    const id = t.nextId();
    const error = await failure(t.h.openai.chat.completions.create(ask, { headers: { "x-request-id": id } }));
    expect(error.status).toBe(502);
    expect(error.code).toBe("upstream_error");
    expect(error.message).toMatch(NAMES_THE_LIMIT);
    await t.closedSoon();
    // Refused on its content-length, before the body was read.
    expect(t.received).toBeLessThan(LIMIT);
    expect(await t.accessLine(id)).toMatchObject({ status: 502 });
  });

  it("refuses a chunked JSON reply over the limit the same way", async () => {
    t.fake.next({ contentType: JSON_TYPE, body: chatCompletionJson(1024 * 1024) });
    const error = await failure(t.h.openai.chat.completions.create(ask));
    expect(error.status).toBe(502);
    expect(error.message).toMatch(NAMES_THE_LIMIT);
    await t.closedSoon();
  });

  it.each([
    ["a JSON reply", 200, CHAT_COMPLETION_HEAD],
    ["an error reply", 500, '{"error":{"message":"'],
  ])("answers %s whose body never ends with 502 naming the limit, and closes its connection", async (_what, status, head) => {
    t.fake.next({ status, contentType: JSON_TYPE, body: head, rest: { endless: true } });
    const id = t.nextId();
    const error = await failure(t.h.openai.chat.completions.create(ask, { headers: { "x-request-id": id } }));
    expect(error.status).toBe(502);
    expect(error.message).toMatch(NAMES_THE_LIMIT);
    await cutAtTheLimit();
    expect(await t.accessLine(id)).toMatchObject({ status: 502 });
  });

  it("answers a stream whose first event outgrows the limit with a 502 reply", async () => {
    t.fake.next({ contentType: SSE_TYPE, body: CHAT_CHUNK_HEAD, rest: { endless: true } });
    const id = t.nextId();
    const error = await failure(t.h.openai.chat.completions.create({ ...ask, stream: true }, { headers: { "x-request-id": id } }));
    expect(error.status).toBe(502);
    expect(error.message).toMatch(NAMES_THE_LIMIT);
    await cutAtTheLimit();
    expect(await t.accessLine(id)).toMatchObject({ status: 502 });
  });

  it("ends a stream with its error event when a later event outgrows the limit", async () => {
    t.fake.next({ contentType: SSE_TYPE, body: chatChunkEvent("Hel") + CHAT_CHUNK_HEAD, rest: { endless: true } });
    const stream = await t.h.openai.chat.completions.create({ ...ask, stream: true });
    const { items, error } = await readStream(stream);
    expect(items).toHaveLength(1);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as Error).message).toMatch(NAMES_THE_LIMIT);
    await cutAtTheLimit();
  });

  it("holds a stream read event by event (anthropic) to the same limit", async () => {
    t.fake.next({ contentType: SSE_TYPE, body: MESSAGE_START_EVENT + ANTHROPIC_DELTA_HEAD, rest: { endless: true } });
    // message_start gives only the role chunk: nothing with content was sent, so the client gets an error reply.
    const error = await failure(t.h.openai.chat.completions.create({ ...ask, model: "anthropic/claude-sonnet-4-5", stream: true }));
    expect(error.status).toBe(502);
    expect(error.message).toMatch(/Provider 'anthropic' sent a stream event larger than the limit of 262144 bytes \(server\.upstream_body_limit\)/);
    await cutAtTheLimit();
  });

  it("refuses a /v1/responses JSON reply over the limit", async () => {
    t.fake.next({ contentType: JSON_TYPE, body: responseJson(1024 * 1024) });
    const error = await failure(t.h.openai.responses.create({ model: "openai/gpt-4.1", input: "hi" }));
    expect(error.status).toBe(502);
    expect(error.message).toMatch(NAMES_THE_LIMIT);
    await t.closedSoon();
  });

  it("refuses a /v1/responses JSON reply over the limit that says its length before reading its body", async () => {
    const body = responseJson(1024 * 1024);
    t.fake.next({ contentType: JSON_TYPE, contentLength: Buffer.byteLength(body), body: body });
    const error = await failure(t.h.openai.responses.create({ model: "openai/gpt-4.1", input: "hi" }));
    expect(error.status).toBe(502);
    expect(error.message).toMatch(NAMES_THE_LIMIT);
    await t.closedSoon();
    expect(t.received).toBeLessThan(LIMIT);
  });

  it("ends a /v1/responses stream with its error event when an event outgrows the limit", async () => {
    t.fake.next({ contentType: SSE_TYPE, body: RESPONSE_CREATED_EVENT + RESPONSE_DELTA_HEAD, rest: { endless: true } });
    const stream = await t.h.openai.responses.create({ model: "openai/gpt-4.1", input: "hi", stream: true });
    const { items, error } = await readStream(stream);
    expect(items).toMatchObject([{ type: "response.created" }]);
    expect(String((error as Error | undefined)?.message)).toMatch(NAMES_THE_LIMIT);
    await cutAtTheLimit();
  });
});
