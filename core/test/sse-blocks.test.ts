/**
 * The one SSE block reader (`core/src/sse/blocks.ts`) and the three readers built on it (the chat relay,
 * the responses relay, `readSseEventBatches`): whole events with every kind of line end and every
 * split, the limit in bytes on every path, and work that grows with the bytes read, not with the
 * square of an event that never ends.
 */
import { describe, expect, it } from "vitest";
import { openEventRelay } from "../src/chat/event-relay.ts";
import type { HttpBody } from "../src/upstream/client.ts";
import { toUpstreamError } from "../src/upstream/client.ts";
import { openSseRelay } from "../src/responses/relay.ts";
import { hasData, lastDataEvent, lastEventEnd, SseBlocks } from "../src/sse/blocks.ts";
import { readSseEventBatches } from "../src/sse/read.ts";
import { UPSTREAM_BODY_TOO_LARGE } from "../src/upstream/body-limit.ts";

/** Every block `SseBlocks` gives for `bytes` cut into reads of `size`, and what it still holds. */
function cut(bytes: Buffer, size: number, limit = 1 << 20): { blocks: Buffer[]; held: number } {
  const blocks = new SseBlocks(limit);
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) {
    const block = blocks.push(bytes.subarray(i, i + size));
    if (block !== undefined) out.push(Buffer.from(block));
  }
  const held = blocks.heldLength;
  const rest = blocks.end();
  if (rest !== undefined) out.push(rest);
  return { blocks: out, held: rest === undefined ? held : 0 };
}

/** The events (blank-line separated, as SSE reads them) of whole blocks. */
const eventsOf = (blocks: Buffer[]) => Buffer.concat(blocks).toString("utf8");

describe("SseBlocks", () => {
  const streams: Record<string, string> = {
    LF: 'data: {"a":1}\n\nevent: x\ndata: é€🚀\n\n: comment\n\ndata: [DONE]\n\n',
    CRLF: 'data: {"a":1}\r\n\r\nevent: x\r\ndata: é€🚀\r\n\r\n: comment\r\n\r\ndata: [DONE]\r\n\r\n',
    CR: 'data: {"a":1}\r\revent: x\rdata: é€🚀\r\r: comment\r\rdata: [DONE]\r\r',
    mixed: 'data: {"a":1}\n\r\nevent: x\r\ndata: é€🚀\r\n\n: comment\r\rdata: [DONE]\n\n',
  };

  for (const [name, stream] of Object.entries(streams)) {
    it(`gives whole events only, whatever the reads, with ${name} line ends`, () => {
      const bytes = Buffer.from(stream);
      for (const size of [1, 2, 3, 5, 7, 64]) {
        const { blocks, held } = cut(bytes, size);
        // Every byte comes out, in order, in blocks that end where an event ends.
        expect(eventsOf(blocks)).toBe(stream);
        expect(held).toBe(0);
        // A block may be cut at a CR whose LF comes in the next one, which is then an empty line.
        for (const block of blocks) expect(lastEventEnd(Buffer.concat([Buffer.from("\n\n"), block]))).toBe(block.length + 2);
      }
    });
  }

  it("holds an event until its blank line arrives, and gives nothing for it at the end", () => {
    const { blocks, held } = cut(Buffer.from('data: {"a":1}\n\ndata: {"cut'), 4);
    expect(eventsOf(blocks)).toBe('data: {"a":1}\n\n');
    expect(held).toBe(11);
  });

  it("counts the limit in bytes, not characters: an event of 400 three-byte characters is over 1 kB", () => {
    const blocks = new SseBlocks(1024);
    const event = Buffer.from(`data: ${"€".repeat(400)}`);
    expect(() => {
      for (let i = 0; i < event.length; i += 100) blocks.push(event.subarray(i, i + 100));
    }).toThrow(expect.objectContaining({ code: UPSTREAM_BODY_TOO_LARGE, limit: 1024, part: "event" }));
  });

  it("tells an event from comments and fields without data, and finds a block's last event that is not [DONE]", () => {
    expect(hasData(Buffer.from(": OPENROUTER PROCESSING\n\n"))).toBe(false);
    expect(hasData(Buffer.from("event: ping\nid: 3\n\n"))).toBe(false);
    expect(hasData(Buffer.from(': x\ndata: {"metadata":1}\n\n'))).toBe(true);
    expect(hasData(Buffer.from("data\n\n"))).toBe(true);
    const block = Buffer.from("data: 1\r\n\r\nevent: last\r\ndata: 2\r\n\r\n: tail\r\n\r\ndata: [DONE]\r\n\r\n");
    expect(lastDataEvent(block)?.toString()).toBe("event: last\r\ndata: 2\r\n\r\n");
    expect(lastDataEvent(Buffer.from(": only a comment\n\n"))).toBeUndefined();
  });
});

/** An upstream body made of `reads`, as the HTTP client's is: one buffer per read, each step a microtask. */
function bodyOf(reads: Iterable<Buffer>, bufferLimit?: number): HttpBody {
  let destroyed = false;
  const iterator = reads[Symbol.iterator]();
  return {
    bufferLimit,
    get destroyed() {
      return destroyed;
    },
    destroy: () => void (destroyed = true),
    text: () => Promise.reject(new Error("not read as text")),
    json: () => Promise.reject(new Error("not read as JSON")),
    [Symbol.asyncIterator]: () => ({
      next: () => Promise.resolve(destroyed ? { done: true as const, value: undefined } : iterator.next()),
      return: () => {
        destroyed = true;
        return Promise.resolve({ done: true as const, value: undefined });
      },
    }),
  };
}

const READ = 16 * 1024;
const ENDLESS_EVENT = 32 * 1024 * 1024;
/** A 32 MB event that never ends, in 16 kB reads, after one whole event. */
function* endlessEvent(first: string): Generator<Buffer> {
  yield Buffer.from(first);
  const filler = Buffer.alloc(READ, 0x61);
  yield Buffer.from("data: ");
  for (let sent = 0; sent < ENDLESS_EVENT; sent += READ) yield filler;
}
/**
 * CPU time for 32 MB: the reader's own work is a few copies of each byte, tens of milliseconds. A
 * reader that copies and searches all it holds on every read needs tens of seconds (2,048 reads of
 * 16 MB on average); the bound sits far from both.
 */
const CPU_BOUND_MS = 5_000;

async function cpuMs(run: () => Promise<void>): Promise<number> {
  const start = process.cpuUsage();
  await run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

describe("an event that never ends costs work in proportion to its bytes", () => {
  const chunk = '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}';

  it("through the chat relay: the chunk before it, then the error event", { timeout: 120_000 }, async () => {
    const frames: string[] = [];
    const used = await cpuMs(async () => {
      const relay = await openEventRelay(
        { body: bodyOf(endlessEvent(`data: ${chunk}\n\n`)), errorOf: () => undefined },
        { provider: "p", timeoutMs: 1000, includeUsage: false, keepServiceTier: true, clientGone: () => false, classify: (error) => toUpstreamError(error, "p", 1000) },
      );
      for await (const frame of relay) frames.push(frame);
    });
    expect(frames[0]).toBe(`data: ${chunk}\n\n`);
    expect(frames.at(-1)).toMatch(/^data: \{"error":/);
    expect(used).toBeLessThan(CPU_BOUND_MS);
  });

  it("through the responses relay: the event before it, then the error event", { timeout: 120_000 }, async () => {
    const created = 'event: response.created\ndata: {"type":"response.created"}\n\n';
    const frames: string[] = [];
    const used = await cpuMs(async () => {
      const relay = await openSseRelay(bodyOf(endlessEvent(created)), {
        provider: "openai",
        classify: (error) => toUpstreamError(error, "openai", 1000),
        clientGone: () => false,
        onEnd: () => {},
        onError: () => {},
      });
      for await (const frame of relay) frames.push(Buffer.from(frame).toString("utf8"));
    });
    expect(frames[0]).toBe(created);
    expect(frames.at(-1)).toMatch(/^event: error\n/);
    expect(used).toBeLessThan(CPU_BOUND_MS);
  });

  it("through readSseEventBatches: the event before it, nothing of it", { timeout: 120_000 }, async () => {
    const data: string[] = [];
    const used = await cpuMs(async () => {
      for await (const batch of readSseEventBatches(bodyOf(endlessEvent("data: 1\n\n")))) for (const event of batch) data.push(event.data);
    });
    expect(data).toEqual(["1"]);
    expect(used).toBeLessThan(CPU_BOUND_MS);
  });
});

describe("the chat relay on the block reader", () => {
  const chunk = (content: string, finish: string | null = null) =>
    `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"${content}"},"finish_reason":${finish === null ? "null" : `"${finish}"`}}]}`;
  const events = [chunk("a"), chunk("é€"), chunk("", "stop")];
  const lf = events.map((data) => `data: ${data}\n\n`).join("");

  async function relayed(reads: Buffer[]): Promise<string> {
    const relay = await openEventRelay(
      { body: bodyOf(reads), errorOf: () => undefined },
      { provider: "p", timeoutMs: 1000, includeUsage: false, keepServiceTier: true, clientGone: () => false, classify: (error) => toUpstreamError(error, "p", 1000) },
    );
    let text = "";
    for await (const frame of relay) text += frame;
    return text;
  }

  it.each([
    ["CR", events.map((data) => `data: ${data}\r\r`).join("")],
    ["CRLF", events.map((data) => `data: ${data}\r\n\r\n`).join("")],
    ["LF, CRLF and CR in turn", `data: ${events[0]}\n\ndata: ${events[1]}\r\n\r\ndata: ${events[2]}\r\r`],
  ])("relays %s line ends as the same events, however the reads are cut", async (_name, stream) => {
    const bytes = Buffer.from(stream);
    const expected = `${lf}data: [DONE]\n\n`;
    expect(await relayed([bytes])).toBe(expected);
    for (let at = 1; at < bytes.length; at++) expect(await relayed([bytes.subarray(0, at), bytes.subarray(at)])).toBe(expected);
    expect(await relayed([...bytes].map((byte) => Buffer.of(byte)))).toBe(expected);
  });
});

describe("the limit counts bytes on every path", () => {
  const LIMIT = 1024;
  // 400 characters, 1,200 bytes: under the limit in UTF-16 units, over it in bytes.
  const wide = `data: ${"€".repeat(400)}\n\n`;
  const reads = (text: string) => Array.from({ length: Math.ceil(Buffer.byteLength(text) / 100) }, (_, i) => Buffer.from(text).subarray(i * 100, i * 100 + 100));
  const tooLarge = expect.objectContaining({ status: 502, message: expect.stringContaining(`larger than the limit of ${LIMIT} bytes`) });

  it("readSseEventBatches", async () => {
    const error = await (async () => {
      for await (const _ of readSseEventBatches(bodyOf(reads(wide), LIMIT)));
    })().catch((e: unknown) => e);
    expect(toUpstreamError(error, "p", 1000)).toEqual(tooLarge);
  });

  it("the chat relay, with CRLF line ends (read by the general parser)", async () => {
    // A comment first, so that the stream's first read already has its CRs.
    const error = await openEventRelay(
      { body: bodyOf(reads(`: hi\r\n\r\n${wide.replaceAll("\n", "\r\n")}`), LIMIT), errorOf: () => undefined },
      { provider: "p", timeoutMs: 1000, includeUsage: false, keepServiceTier: true, clientGone: () => false, classify: (e) => toUpstreamError(e, "p", 1000) },
    ).catch((e: unknown) => e);
    expect(toUpstreamError(error, "p", 1000)).toEqual(tooLarge);
  });
});
