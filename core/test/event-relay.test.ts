/**
 * The relay of OpenAI-format streams (`chat/event-relay.ts`) against the chunk-by-chunk path it
 * replaces for such upstreams (a `chatStream` of each read's payloads + `openChatStreamFrames`): the
 * same bytes cut into reads at every kind of place must give the client the same frames.
 */
import { createParser } from "eventsource-parser";
import { describe, expect, it } from "vitest";
import { openEventRelay } from "../src/chat/event-relay.ts";
import { ModelmuxError } from "../src/errors.ts";
import { replyBody } from "../src/upstream/in-process-body.ts";
import { chunk, errorEventOf, errorPayload, every, finish, OPTIONS, plain, reads, sse, usageChunk, viaChunks, viaRelay } from "./fixtures/relay-fixtures.ts";

describe("openEventRelay", () => {
  it("relays a plain stream as the chunk path frames it, read whole", async () => {
    const relay = await viaRelay(reads(plain, []));
    expect(relay).toEqual(await viaChunks(reads(plain, [])));
    expect(relay.text).not.toContain("service_tier");
    expect(relay.text).not.toContain('"choices":[]');
    expect(relay.text.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(relay.usage).toEqual([{ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 }]);
  });

  it("gives the same frames wherever the reads split the bytes (events, lines, characters)", async () => {
    for (const cuts of [...every(plain), [3, 9, 200, 201, 202, 203], [0, 1, 2, 3, 4, 5, 6, 7]]) {
      const relay = await viaRelay(reads(plain, cuts));
      const chunks = await viaChunks(reads(plain, cuts));
      expect(relay.text, `cut at ${cuts}`).toBe(chunks.text);
      expect(relay.usage).toEqual(chunks.usage);
      expect(relay.collected).toEqual(chunks.collected);
    }
  });

  it("keeps the usage chunk and service_tier when the client asked for them", async () => {
    const options = { includeUsage: true, keepServiceTier: true };
    const relay = await viaRelay(reads(plain, [100, 400]), options);
    expect(relay.text).toBe((await viaChunks(reads(plain, [100, 400]), options)).text);
    expect(relay.text).toBe(plain);
  });

  it.each([
    ["CRLF line ends", plain.replaceAll("\n", "\r\n")],
    ["comments and event names", `: keep-alive\n\n${sse(chunk("a"))}event: message\ndata: ${chunk("b")}\n\n${sse(finish)}${sse(usageChunk)}data: [DONE]\n\n`],
    ["data without a space and a multi-line event", `data:${chunk("a")}\n\n${sse(chunk("b"))}data: ${chunk("c")}\ndata: \n\n${sse(finish)}${sse(usageChunk)}`],
    ["blank data and an id", `data: \n\n${sse(chunk("a"))}id: 7\ndata: ${chunk("b")}\n\n${sse(finish)}data: [DONE]\n\n`],
  ])("reads %s like the SSE parser does", async (_name, text) => {
    for (const cuts of [[], [7], [50, 51, 52], [Buffer.byteLength(text) - 3]]) {
      const relay = await viaRelay(reads(text, cuts));
      const chunks = await viaChunks(reads(text, cuts));
      expect(relay.text).toBe(chunks.text);
      expect(relay.usage).toEqual(chunks.usage);
    }
  });

  it("relays an event whose JSON spans several data lines as events the client can parse", async () => {
    // Pretty-printed JSON across `data:` lines: the SSE parser joins them with line feeds.
    const multiLine = `data: {"id":"c","object":"chat.completion.chunk",\ndata:  "created":1,"model":"m","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}\n\n`;
    const text = multiLine + sse(finish) + "data: [DONE]\n\n";
    for (const run of [await viaRelay(reads(text, [])), await viaChunks(reads(text, []))]) {
      const data: string[] = [];
      createParser({ onEvent: (event) => void data.push(event.data) }).feed(run.text);
      expect(data.at(-1)).toBe("[DONE]");
      for (const event of data.slice(0, -1)) expect(() => JSON.parse(event), event).not.toThrow();
      expect(data).toHaveLength(3);
    }
  });

  it("sends the chunks before an error event of the same read, then one error event and no [DONE]", async () => {
    const text = sse(chunk("a")) + sse(errorPayload) + sse(chunk("never"));
    for (const cuts of [[], [10]]) {
      const relay = await viaRelay(reads(text, cuts));
      expect(relay.thrown).toBeUndefined();
      expect(relay.text).toBe((await viaChunks(reads(text, cuts))).text);
      expect(relay.text).toContain('"upstream_error"');
      expect(relay.text).toContain("overloaded");
      expect(relay.text).not.toContain("never");
      expect(relay.text).not.toContain("[DONE]");
    }
  });

  it("throws an error event that comes first, so it becomes an error reply", async () => {
    const relay = await viaRelay(reads(`event: error\ndata: ${errorPayload}\n\n`, []));
    expect(relay.thrown).toBeInstanceOf(ModelmuxError);
    expect((relay.thrown as ModelmuxError).status).toBe(502);
    expect(relay.text).toBe("");
    const plainError = await viaRelay(reads(sse(errorPayload), []));
    expect((plainError.thrown as ModelmuxError).message).toContain("overloaded");
  });

  it("is a 502 for a body with no events, and ends with an error event when the body breaks off", async () => {
    const empty = await viaRelay(reads(": nothing\n\n", []));
    expect((empty.thrown as ModelmuxError).message).toBe("p: the reply to a streamed request carried no events.");
    const broken = replyBody(
      (async function* () {
        yield Buffer.from(sse(chunk("a")));
        throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
      })(),
    );
    const frames = await openEventRelay({ body: broken, errorOf: () => undefined }, { ...OPTIONS, includeUsage: false, keepServiceTier: false });
    const seen: string[] = [];
    for await (const frame of frames) seen.push(frame);
    expect(seen).toHaveLength(2);
    expect(JSON.parse(seen[1]!.slice("data: ".length))).toMatchObject({ error: { code: "upstream_error", type: "api_error" } });
  });

  it("stops reading and sends nothing more once the client is gone", async () => {
    let gone = false;
    const body = replyBody([Buffer.from(sse(chunk("a"))), Buffer.from(sse(chunk("b")))]);
    const frames = await openEventRelay({ body, errorOf: () => undefined }, { ...OPTIONS, includeUsage: false, keepServiceTier: false, clientGone: () => gone });
    const first = await frames.next();
    expect(first.value).toContain('"a"');
    gone = true;
    expect((await frames.next()).done).toBe(true);
    expect(body.destroyed).toBe(true);
  });

  it("refuses an event larger than the body's limit (server.upstream_body_limit) instead of buffering it", async () => {
    for (const lineEnd of ["\n", "\r\n"]) {
      const chunk = '{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}';
      const body = Object.assign(replyBody([Buffer.from(`data: ${chunk}${lineEnd}${lineEnd}data: `), Buffer.alloc(2048, 0x61)]), { bufferLimit: 1024 });
      const frames = await openEventRelay({ body, errorOf: () => undefined }, { ...OPTIONS, includeUsage: false, keepServiceTier: false });
      const text = (await frames.next()).value as string;
      expect(text).toBe(`data: ${chunk}\n\n`);
      const last = (await frames.next()).value as string;
      expect(JSON.parse(last.slice(6))).toMatchObject({ error: { code: "upstream_error", message: expect.stringContaining("larger than the limit of 1024 bytes (server.upstream_body_limit)") } });
      expect((await frames.next()).done).toBe(true);
      expect(body.destroyed).toBe(true);
    }
  });
});


describe("openEventRelay: a stream must be whole", () => {
  const unreadable = [
    "not json",
    "null",
    '{"foo":1}',
    '{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hel',
    '{"choices":5}',
    '[{"choices":[]}]',
    '"text"',
    // Cut short where its ends still look whole, choices only in a nested object, a choice the request did not ask for.
    '{"choices":[}',
    '{"id":"x","choices":[{"index":0,"delta":{"content":"hi"}}',
    '{"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"stop"}',
    '{"foo":{"choices":[]}}',
    '{"choices":[{"index":1,"delta":{"content":"hi"},"finish_reason":null}]}',
  ];

  it.each(unreadable)("is a 502 for %j as the first event, never relayed", async (event) => {
    const text = sse(event) + sse(chunk("a")) + sse(finish) + sse(usageChunk) + "data: [DONE]\n\n";
    for (const run of [await viaRelay(reads(text, [])), await viaChunks(reads(text, []))]) {
      expect(run.text).toBe("");
      expect(run.thrown).toBeInstanceOf(ModelmuxError);
      expect(run.thrown).toMatchObject({ status: 502, code: "upstream_error", message: "p: the upstream sent a stream event that is not a chat.completion.chunk." });
    }
  });

  it.each(unreadable)("ends with the error event and no [DONE] for %j after content, relaying the chunks before it only", async (event) => {
    const text = sse(chunk("a")) + sse(chunk("b")) + sse(event) + sse(chunk("never")) + sse(finish) + sse(usageChunk) + "data: [DONE]\n\n";
    for (const cuts of [[], [Buffer.byteLength(sse(chunk("a")))]]) {
      const relay = await viaRelay(reads(text, cuts));
      expect(relay.thrown).toBeUndefined();
      expect(relay.text).toBe((await viaChunks(reads(text, cuts))).text);
      expect(relay.text).toContain('"b"');
      expect(relay.text).not.toContain("never");
      expect(relay.text).not.toContain("[DONE]");
      expect(relay.text).not.toContain(`data: ${event}\n`);
      expect(errorEventOf(relay.text)).toMatchObject({ code: "upstream_error", message: "p: the upstream sent a stream event that is not a chat.completion.chunk." });
    }
  });

  it("relays odd but valid chunks: blanks around the object and the colon, choices named in a value first", async () => {
    const odd = [' {"choices" :  [ {"index":0,"delta":{"content":"x"},"finish_reason":null} ] } ', '{"id":"more choices","choices":[{"index":0,"delta":{},"finish_reason" : "stop"}]}'];
    const text = `data:${odd[0]}\n\n` + sse(odd[1]!) + "data: [DONE]\n\n";
    const relay = await viaRelay(reads(text, []));
    expect(relay.thrown).toBeUndefined();
    expect(relay.text).toBe((await viaChunks(reads(text, []))).text);
    expect(relay.text.endsWith("data: [DONE]\n\n")).toBe(true);
  });

  it("ends a stream that stops before its finish_reason with the error event, not [DONE], with or without [DONE] from the upstream", async () => {
    for (const end of ["", "data: [DONE]\n\n"]) {
      const text = sse(chunk("Hel")) + sse(chunk("lo")) + end;
      const relay = await viaRelay(reads(text, [Buffer.byteLength(sse(chunk("Hel")))]));
      expect(relay.thrown).toBeUndefined();
      expect(relay.text).toBe((await viaChunks(reads(text, [Buffer.byteLength(sse(chunk("Hel")))]))).text);
      expect(relay.text).toContain('"lo"');
      expect(relay.text).not.toContain("[DONE]");
      expect(errorEventOf(relay.text)).toEqual({
        message: "p: the upstream stream ended before the answer was complete (no finish_reason).",
        type: "api_error",
        code: "upstream_error",
        param: null,
      });
      expect(relay.collected).toHaveLength(2);
    }
  });

  it("is a 502 when the first read already holds the whole unfinished stream", async () => {
    const relay = await viaRelay(reads(sse(chunk("Hel")) + sse(usageChunk) + "data: [DONE]\n\n", []));
    expect(relay.text).toBe("");
    expect(relay.thrown).toMatchObject({ status: 502, code: "upstream_error", message: "p: the upstream stream ended before the answer was complete (no finish_reason)." });
  });

  it("needs a finish_reason for each of the request's n choices", async () => {
    const two = (index: number, content: string) => `{"id":"c","choices":[{"index":${index},"delta":{"content":"${content}"},"finish_reason":null}]}`;
    const half = sse(two(0, "a")) + sse(two(1, "b")) + sse(finish);
    const broken = await viaRelay(reads(half + sse(usageChunk), [Buffer.byteLength(sse(two(0, "a")))]), { choices: 2 });
    expect(errorEventOf(broken.text)?.message).toBe("p: the upstream stream ended before the answer was complete (finish_reason for 1 of 2 choices).");
    const whole = half + sse(finish.replace('"index":0', '"index":1')) + sse(usageChunk);
    const relay = await viaRelay(reads(whole, [10]), { choices: 2 });
    expect(relay.text.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(relay.usage).toHaveLength(1);
  });

  it("counts a finish reason once per choice index: a repeated one for choice 0 does not finish choice 1", async () => {
    const two = (index: number, content: string) => `{"id":"c","choices":[{"index":${index},"delta":{"content":"${content}"},"finish_reason":null}]}`;
    const text = sse(two(0, "a")) + sse(two(1, "b")) + sse(finish) + sse(finish) + "data: [DONE]\n\n";
    const cuts = [Buffer.byteLength(sse(two(0, "a")))];
    for (const run of [await viaRelay(reads(text, cuts), { choices: 2 }), await viaChunks(reads(text, cuts), { choices: 2 })]) {
      expect(run.text).not.toContain("[DONE]");
      expect(errorEventOf(run.text)?.message).toBe("p: the upstream stream ended before the answer was complete (finish_reason for 1 of 2 choices).");
    }
  });

  it("shows errorOf only events that may be errors: not a chunk, named error, or with an error key", async () => {
    const shown: string[] = [];
    const errorOf = (_event: string | undefined, data: string) => void shown.push(data);
    const withError = '{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"error":{"message":"x"}}';
    const text = sse(chunk('an "error": in content')) + sse(withError) + "data: [DONE]\n\n";
    const frames = await openEventRelay({ body: replyBody([Buffer.from(text)]), errorOf }, { ...OPTIONS, includeUsage: false, keepServiceTier: false });
    for await (const _frame of frames);
    expect(shown).toEqual([withError]);
  });

  it("stores nothing of a broken stream: beforeDone is not called", async () => {
    let stored = 0;
    const relay = await viaRelay(reads(sse(chunk("a")) + sse(chunk("b")), [5]), { beforeDone: async () => void stored++ });
    expect(relay.text).not.toContain("[DONE]");
    expect(stored).toBe(0);
  });
});
