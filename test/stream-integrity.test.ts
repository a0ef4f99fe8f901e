/**
 * A streamed chat reply is a success only when it is whole (README "Errors"), end to end: the
 * official openai SDK → modelmux → provider-openai → a fake OpenAI upstream on 127.0.0.1 that cuts
 * its stream short, sends events that are not chunks, or leaves out `[DONE]`. Stored completions
 * (`store: true`, memory storage) show what was kept. Run in-process and over a real port; a
 * provider-gemini part at the end.
 */
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../core/src/logger.ts";
import { startFakeGemini, type FakeGemini } from "./fixtures/fake-gemini.ts";
import { startFakeOpenAI, type FakeOpenAI, type FakeReply } from "./fixtures/fake-openai.ts";
import { postJson, readSse, startHarness, testConfig, TRANSPORTS, type Harness } from "./helpers/harness.ts";
import { sleep } from "./helpers/wait.ts";

const UPSTREAM_KEY = "sk-upstream-integrity";
const MODEL = "openai/gpt-4o-mini";
const ask = (content: string) => [{ role: "user" as const, content }];
const UNFINISHED = "openai: the upstream stream ended before the answer was complete (no finish_reason).";
const UNREADABLE = "openai: the upstream sent a stream event that is not a chat.completion.chunk.";
/** A chunk cut short right after a `}`, with its finish reason: it looks whole to a glance at its ends. */
const CUT_FINISH = '{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}';
/** Events an OpenAI-shaped stream must not carry: not JSON, not an object, not a chunk, a chunk cut short, a choice not asked for. */
const BAD_EVENTS = [
  "not json",
  "null",
  '{"foo":1}',
  '{"id":"chatcmpl-x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hel',
  '{"choices":[}',
  '{"id":"x","choices":[{"index":0,"delta":{"content":"hi"}}',
  CUT_FINISH,
  '{"foo":{"choices":[]}}',
  '{"id":"x","choices":[{"index":1,"delta":{"content":"hi"},"finish_reason":null}]}',
];
/** One chunk of a raw OpenAI stream. */
const rawChunk = (choices: object[]) => `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", choices })}\n\n`;

interface ErrorEnvelope {
  error: { message: string; type: string; code: string | null; param: string | null };
}

for (const transport of TRANSPORTS) {
  describe(`a streamed chat reply must be whole (${transport})`, () => {
    let fake: FakeOpenAI;
    let h: Harness;
    const logLines: string[] = [];

    beforeAll(async () => {
      fake = await startFakeOpenAI({ apiKey: UPSTREAM_KEY });
      h = await startHarness(
        testConfig(
          { openai: { plugin: "provider-openai", base_url: fake.url, api_key: UPSTREAM_KEY, models: ["gpt-4o-mini"], capabilities: { n: true }, timeout: "5s" } },
          {
            storage: { plugin: "storage-unstorage", options: { driver: "memory" } },
            rate_limit: { plugin: "ratelimit-memory", app: { requests: 10_000, tokens: 1_000_000, window: "60s" } },
          },
        ),
        transport,
        { logger: createLogger({ level: "info", format: "json", write: (text) => void logLines.push(...text.trim().split("\n")) }) },
      );
    });
    afterEach(() => fake.reset());
    afterAll(async () => {
      await h.close();
      await fake.close();
    });

    /** Streams `body` with the next upstream reply scripted as `reply`; the raw SSE data and the status. */
    async function stream(reply: FakeReply, body: Record<string, unknown> = {}) {
      fake.setNext(reply);
      const res = await h.request("/v1/chat/completions", postJson({ model: MODEL, stream: true, messages: ask("one two three four"), ...body }));
      const type = res.headers.get("content-type") ?? "";
      if (!type.startsWith("text/event-stream")) return { status: res.status, data: [] as string[], json: (await res.json()) as ErrorEnvelope, requestId: res.headers.get("x-request-id") };
      return { status: res.status, data: await readSse(res), json: undefined, requestId: res.headers.get("x-request-id") };
    }

    const storedIds = async () => (await h.openai.chat.completions.list({ limit: 100 })).data.map((c) => c.id);

    /** The access-log record of a request, once the logger has written it. */
    async function accessRecord(requestId: string | null): Promise<Record<string, unknown> | undefined> {
      for (let i = 0; i < 50; i++) {
        h.router.logger.flush();
        const found = logLines.map((line) => JSON.parse(line) as Record<string, unknown>).find((r) => r.request_id === requestId && r.status !== undefined);
        if (found) return found;
        await sleep(20);
      }
      return undefined;
    }

    /** The app's remaining tokens, as a new request's headers tell them. */
    async function remainingTokens(): Promise<number> {
      fake.setNext({ content: "x", usage: { prompt_tokens: 0, completion_tokens: 0 } });
      const probe = await h.request("/v1/chat/completions", postJson({ model: MODEL, messages: ask("x") }));
      await probe.text();
      return Number(probe.headers.get("x-ratelimit-remaining-tokens"));
    }

    describe("a stream that ends cleanly without a finish_reason", () => {
      it.each([false, true])("ends with one error event and no [DONE] (store: %s); nothing is stored", async (store) => {
        const before = await storedIds();
        const { status, data } = await stream({ streamFailure: { afterChunks: 3, mode: "end" } }, { store });
        expect(status).toBe(200);
        expect(data).not.toContain("[DONE]");
        expect(data.filter((d) => d.startsWith('{"error"'))).toHaveLength(1);
        expect(JSON.parse(data.at(-1)!)).toEqual({ error: { message: UNFINISHED, type: "api_error", code: "upstream_error", param: null } });
        expect(data.some((d) => d.includes('"finish_reason":"stop"'))).toBe(false);
        expect(await storedIds()).toEqual(before);
      });

      it("is an error for the SDK too, not a short answer", async () => {
        fake.setNext({ streamFailure: { afterChunks: 2, mode: "end" } });
        const sdkStream = await h.openai.chat.completions.create({ model: MODEL, stream: true, store: true, messages: ask("one two three four") });
        let text = "";
        const failure = await (async () => {
          for await (const chunk of sdkStream) text += chunk.choices[0]?.delta.content ?? "";
        })().catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(OpenAI.APIError);
        expect((failure as InstanceType<typeof OpenAI.APIError>).message).toContain("ended before the answer was complete");
        expect(text).toBe("Echo: ");
      });

      it("with [DONE] but no finish_reason, is broken all the same", async () => {
        const chunk = (content: string) => JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", choices: [{ index: 0, delta: { content }, finish_reason: null }] });
        fake.setNext({ raw: { contentType: "text/event-stream", body: `data: ${chunk("a")}\n\ndata: ${chunk("b")}\n\ndata: [DONE]\n\n` } });
        const before = await storedIds();
        const res = await h.request("/v1/chat/completions", postJson({ model: MODEL, stream: true, store: true, messages: ask("x") }));
        // Usually the whole broken stream comes in the first read: then nothing was sent, and it is an error reply.
        const body = res.status === 200 ? JSON.parse((await readSse(res)).at(-1)!) : await res.json();
        expect(body).toMatchObject({ error: { code: "upstream_error", message: UNFINISHED } });
        expect(await storedIds()).toEqual(before);
      });

      it("with n: 0 (one choice, as without n), is broken all the same", async () => {
        const { status, data } = await stream({ streamFailure: { afterChunks: 3, mode: "end" } }, { n: 0 });
        expect(status).toBe(200);
        expect(data).not.toContain("[DONE]");
        expect(JSON.parse(data.at(-1)!)).toMatchObject({ error: { message: UNFINISHED } });
        const whole = await stream({}, { n: 0 });
        expect(whole.data.at(-1)).toBe("[DONE]");
      });

      it("needs a finish_reason for each choice index: a repeated one for choice 0 does not finish choice 1", async () => {
        const body =
          rawChunk([{ index: 0, delta: { content: "a" }, finish_reason: null }]) +
          rawChunk([{ index: 1, delta: { content: "b" }, finish_reason: null }]) +
          rawChunk([{ index: 0, delta: {}, finish_reason: "stop" }]) +
          rawChunk([{ index: 0, delta: {}, finish_reason: "stop" }]) +
          "data: [DONE]\n\n";
        const before = await storedIds();
        for (const store of [false, true]) {
          fake.setNext({ raw: { contentType: "text/event-stream", body } });
          const res = await h.request("/v1/chat/completions", postJson({ model: MODEL, stream: true, n: 2, store, messages: ask("x") }));
          const reply = res.status === 200 ? JSON.parse((await readSse(res)).at(-1)!) : await res.json();
          expect(reply.error.message).toBe("openai: the upstream stream ended before the answer was complete (finish_reason for 1 of 2 choices).");
        }
        expect(await storedIds()).toEqual(before);
      });

      it("needs every one of n choices to finish", async () => {
        const choice = (index: number, delta: object, finish: string | null) =>
          JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", choices: [{ index, delta, finish_reason: finish }] });
        const body = [choice(0, { content: "a" }, null), choice(1, { content: "b" }, null), choice(0, {}, "stop")].map((d) => `data: ${d}\n\n`).join("") + "data: [DONE]\n\n";
        fake.setNext({ raw: { contentType: "text/event-stream", body } });
        const res = await h.request("/v1/chat/completions", postJson({ model: MODEL, stream: true, n: 2, messages: ask("x") }));
        const reply = res.status === 200 ? JSON.parse((await readSse(res)).at(-1)!) : await res.json();
        expect(reply.error.message).toBe("openai: the upstream stream ended before the answer was complete (finish_reason for 1 of 2 choices).");
      });
    });

    describe("a stream with its finish_reason but no [DONE]", () => {
      it("is complete at the upstream's end: [DONE], stored with the reported usage", async () => {
        fake.setNext({ streamEnd: "eof", usage: { prompt_tokens: 7, completion_tokens: 5 } });
        const sdkStream = await h.openai.chat.completions.create({ model: MODEL, stream: true, store: true, stream_options: { include_usage: true }, messages: ask("one two") });
        let text = "";
        let id = "";
        let usage: OpenAI.CompletionUsage | null | undefined;
        for await (const chunk of sdkStream) {
          id = chunk.id;
          text += chunk.choices[0]?.delta.content ?? "";
          if (chunk.usage) usage = chunk.usage;
        }
        expect(text).toBe("Echo: one two");
        expect(usage).toEqual({ prompt_tokens: 7, completion_tokens: 5, total_tokens: 12 });
        const stored = await h.openai.chat.completions.retrieve(id);
        expect(stored.choices[0]).toMatchObject({ finish_reason: "stop", message: { content: "Echo: one two" } });
        expect(stored.usage).toEqual({ prompt_tokens: 7, completion_tokens: 5, total_tokens: 12 });
      });

      it("ends at the usage chunk while the upstream keeps its connection open, with the usage counted for the client, the log and the limit", async () => {
        const before = await remainingTokens();
        const { status, data, requestId } = await stream({ streamEnd: "hold", usage: { prompt_tokens: 70, completion_tokens: 30 } }, { store: true, stream_options: { include_usage: true } });
        expect(status).toBe(200);
        expect(data.at(-1)).toBe("[DONE]");
        const usageChunk = JSON.parse(data.at(-2)!) as OpenAI.ChatCompletionChunk;
        expect(usageChunk.usage).toEqual({ prompt_tokens: 70, completion_tokens: 30, total_tokens: 100 });
        // The client has its whole reply while the upstream still holds the connection open.
        expect(fake.requests.length).toBeGreaterThanOrEqual(1);
        const held = fake.requests.at(-1)!;
        expect(held.aborted).toBe(false);
        const stored = await h.openai.chat.completions.retrieve(usageChunk.id);
        expect(stored.usage).toEqual({ prompt_tokens: 70, completion_tokens: 30, total_tokens: 100 });
        expect(await accessRecord(requestId)).toMatchObject({ status: 200, prompt_tokens: 70, completion_tokens: 30 });
        expect(before - (await remainingTokens())).toBe(100);
        // Then the router lets go of the upstream request (its [DONE] never came).
        expect((await fake.finished(fake.requests.indexOf(held))).aborted).toBe(true);
      });

      it("is complete when the body breaks off after the finish reason: [DONE], stored, no error event", async () => {
        for (const include_usage of [false, true]) {
          const { status, data } = await stream({ streamEnd: "reset", omitUsage: true }, { store: true, stream_options: { include_usage } });
          expect(status).toBe(200);
          expect(data.filter((d) => d.startsWith('{"error"'))).toEqual([]);
          expect(data.at(-1)).toBe("[DONE]");
          const stored = await h.openai.chat.completions.retrieve((JSON.parse(data[0]!) as OpenAI.ChatCompletionChunk).id);
          expect(stored.choices[0]).toMatchObject({ finish_reason: "stop", message: { content: "Echo: one two three four" } });
          expect(stored).not.toHaveProperty("usage");
        }
      });

      it("ends about a second after the finish reason when the upstream holds the body open without a usage chunk", async () => {
        const started = Date.now();
        const { status, data } = await stream({ streamEnd: "hold", omitUsage: true }, { store: true, stream_options: { include_usage: true } });
        // The provider's timeout is 5s: the stream ends well before it, with [DONE], not the timeout's error.
        expect(Date.now() - started).toBeLessThan(4000);
        expect(status).toBe(200);
        expect(data.at(-1)).toBe("[DONE]");
        expect(data.filter((d) => d.startsWith('{"error"'))).toEqual([]);
        const stored = await h.openai.chat.completions.retrieve((JSON.parse(data[0]!) as OpenAI.ChatCompletionChunk).id);
        expect(stored.choices[0]!.message.content).toBe("Echo: one two three four");
        // The router lets go of the upstream request it no longer needs.
        expect((await fake.finished(fake.requests.length - 1)).aborted).toBe(true);
      });

      it("still relays and counts the usage chunk that comes within that second", async () => {
        fake.setNext({ usage: { prompt_tokens: 3, completion_tokens: 4 }, streamEnd: "hold" });
        const res = await h.request("/v1/chat/completions", postJson({ model: MODEL, stream: true, messages: ask("x"), stream_options: { include_usage: true } }));
        const data = await readSse(res);
        expect(data.at(-1)).toBe("[DONE]");
        expect((JSON.parse(data.at(-2)!) as OpenAI.ChatCompletionChunk).usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
      });

      it("without usage, is stored without usage: none is made up", async () => {
        const { data } = await stream({ streamEnd: "eof", omitUsage: true }, { store: true });
        expect(data.at(-1)).toBe("[DONE]");
        const id = (JSON.parse(data[0]!) as OpenAI.ChatCompletionChunk).id;
        const stored = await h.openai.chat.completions.retrieve(id);
        expect(stored.choices[0]!.finish_reason).toBe("stop");
        expect(stored).not.toHaveProperty("usage");
      });
    });

    describe("an event that is not a chunk", () => {
      it.each(BAD_EVENTS)("as the first event (%j): 502 upstream_error, nothing relayed or stored", async (event) => {
        const before = await storedIds();
        for (const store of [false, true]) {
          const { status, json, data } = await stream({ insertEvent: { afterChunks: 0, data: event } }, { store });
          expect(status).toBe(502);
          expect(data).toEqual([]);
          expect(json).toEqual({ error: { message: UNREADABLE, type: "api_error", code: "upstream_error", param: null } });
        }
        expect(await storedIds()).toEqual(before);
      });

      it.each(BAD_EVENTS)("after content (%j): the chunks before it, one error event, no [DONE]; never a 500", async (event) => {
        const before = await storedIds();
        for (const store of [false, true]) {
          const { status, data } = await stream({ insertEvent: { afterChunks: 2, data: event } }, { store });
          expect(status).toBe(200);
          expect(data).not.toContain(event);
          expect(data).not.toContain("[DONE]");
          expect(data.filter((d) => d.startsWith('{"error"'))).toHaveLength(1);
          expect(JSON.parse(data.at(-1)!)).toEqual({ error: { message: UNREADABLE, type: "api_error", code: "upstream_error", param: null } });
          expect(data.slice(0, -1).map((d) => (JSON.parse(d) as OpenAI.ChatCompletionChunk).choices[0]?.delta.content ?? "").join("")).toBe("Echo: ");
        }
        expect(await storedIds()).toEqual(before);
      });

      it("ends with the error event, not [DONE], for a cut chunk that carries the finish reason", async () => {
        const { status, data } = await stream({ insertEvent: { afterChunks: 2, data: CUT_FINISH }, streamFailure: { afterChunks: 3, mode: "end" } }, { store: true });
        expect(status).toBe(200);
        expect(data).not.toContain("[DONE]");
        expect(data).not.toContain(CUT_FINISH);
        expect(JSON.parse(data.at(-1)!)).toEqual({ error: { message: UNREADABLE, type: "api_error", code: "upstream_error", param: null } });
      });

      it.each(BAD_EVENTS)("is an SDK APIError after content (%j), never the SDK's own parse error", async (event) => {
        fake.setNext({ insertEvent: { afterChunks: 2, data: event } });
        const sdkStream = await h.openai.chat.completions.create({ model: MODEL, stream: true, messages: ask("one two three four") });
        const failure = await (async () => {
          for await (const _chunk of sdkStream);
        })().catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(OpenAI.APIError);
        expect((failure as InstanceType<typeof OpenAI.APIError>).message).toContain("not a chat.completion.chunk");
      });

      it("is a 502 for a tool call with an absurd index under store: true (nothing stored, the router stays responsive)", async () => {
        const before = await storedIds();
        const call = { index: 4294967294, id: "call_1", type: "function", function: { name: "f", arguments: "{}" } };
        const body = rawChunk([{ index: 0, delta: { role: "assistant", content: null, tool_calls: [call] }, finish_reason: null }]) + rawChunk([{ index: 0, delta: {}, finish_reason: "tool_calls" }]) + "data: [DONE]\n\n";
        const { status, json, data } = await stream({ raw: { contentType: "text/event-stream", body } }, { store: true });
        const error = status === 200 ? (JSON.parse(data.at(-1)!) as ErrorEnvelope) : json!;
        expect(error).toEqual({ error: { message: UNREADABLE, type: "api_error", code: "upstream_error", param: null } });
        expect(await storedIds()).toEqual(before);
      });

      it("is an SDK error, not content", async () => {
        fake.setNext({ insertEvent: { afterChunks: 0, data: '{"foo":1}' } });
        const failure = await h.openai.chat.completions.create({ model: MODEL, stream: true, store: true, messages: ask("x") }).catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(OpenAI.APIError);
        expect((failure as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
      });
    });

    describe("a JSON reply whose upstream reported no usage", () => {
      it("carries no usage (none is made up), which the SDK accepts; stored the same", async () => {
        fake.setNext({ omitUsage: true });
        const res = await h.request("/v1/chat/completions", postJson({ model: MODEL, store: true, messages: ask("hi there") }));
        const raw = (await res.json()) as Record<string, unknown>;
        expect(res.status).toBe(200);
        expect(raw).not.toHaveProperty("usage");
        expect((await h.openai.chat.completions.retrieve(raw.id as string))).not.toHaveProperty("usage");
        fake.setNext({ omitUsage: true });
        const reply = await h.openai.chat.completions.create({ model: MODEL, messages: ask("hi there") });
        expect(reply.choices[0]!.message.content).toBe("Echo: hi there");
        expect(reply.usage).toBeUndefined();
      });
    });
  });
}

describe("a streamed gemini reply to a blocked prompt", () => {
  let gemini: FakeGemini;
  let h: Harness;

  beforeAll(async () => {
    gemini = await startFakeGemini();
    h = await startHarness(testConfig({ gemini: { plugin: "provider-gemini", models: ["gemini-2.5-flash"], ...gemini.options } }), "http");
  });
  afterAll(async () => {
    await h.close();
    await gemini.close();
  });

  it.each([1, 2, 3])("finishes each of n = %i choices with content_filter", async (n) => {
    const blocked = { promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 3, totalTokenCount: 3 }, modelVersion: "gemini-2.5-flash", responseId: "r1" };
    gemini.next({ raw: { contentType: "text/event-stream", body: `data: ${JSON.stringify(blocked)}\r\n\r\n` } });
    const res = await h.request("/v1/chat/completions", postJson({ model: "gemini/gemini-2.5-flash", stream: true, n, messages: ask("x") }));
    expect(res.status).toBe(200);
    const data = await readSse(res);
    expect(data.at(-1)).toBe("[DONE]");
    const finishes = data.slice(0, -1).flatMap((d) => (JSON.parse(d) as OpenAI.ChatCompletionChunk).choices.map((c) => [c.index, c.finish_reason]));
    expect(finishes).toEqual(Array.from({ length: n }, (_, i) => [i, "content_filter"]));
  });
});
