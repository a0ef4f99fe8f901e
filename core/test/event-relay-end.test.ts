/**
 * How a relayed stream ends (`chat/event-relay.ts`, `chat/stream-end.ts`): after `[DONE]`, after
 * the last finish reason (the usage chunk, a second of silence, a body that breaks off or is kept
 * open), and when the client leaves; and what is left of the upstream's body then.
 */
import { describe, expect, it } from "vitest";
import { openEventRelay } from "../src/chat/event-relay.ts";
import { replyBody } from "../src/upstream/in-process-body.ts";
import type { Usage } from "../src/types/chat.ts";
import { chunk, errorEventOf, errorPayload, every, finish, OPTIONS, reads, scriptedBody, sse, usageChunk, viaChunks, viaRelay } from "./fixtures/relay-fixtures.ts";

describe("openEventRelay: the end of a stream", () => {
  it("ignores what follows [DONE] and destroys a body that has not ended", async () => {
    const body = replyBody(
      (async function* () {
        yield Buffer.from(sse(chunk("a")) + sse(finish) + "data: [DONE]\n\n");
        await new Promise((resolve) => setTimeout(resolve, 60_000));
        yield Buffer.from(sse(chunk("late")));
      })(),
    );
    const frames = await openEventRelay({ body, errorOf: () => undefined }, { ...OPTIONS, includeUsage: false, keepServiceTier: false });
    let text = "";
    for await (const frame of frames) text += frame;
    expect(text).toBe(sse(chunk("a").replace('"service_tier":"default",', "")) + sse(finish) + "data: [DONE]\n\n");
    await new Promise((resolve) => setImmediate(resolve));
    expect(body.destroyed).toBe(true);
  });

  it("reads a body that ends right after [DONE] to its end instead of destroying it", async () => {
    // A body whose end is only seen by one more read: destroying it first would abort a complete request.
    const calls: string[] = [];
    let reads = 0;
    const body = scriptedBody(
      async () => (++reads === 1 ? { done: false, value: Buffer.from(sse(chunk("a")) + sse(finish) + "data: [DONE]\n\n") } : { done: true, value: undefined }),
      () => calls.push(`destroy after ${reads} reads`),
    );
    const frames = await openEventRelay({ body, errorOf: () => undefined }, { ...OPTIONS, includeUsage: false, keepServiceTier: false });
    for await (const _frame of frames);
    await new Promise((resolve) => setImmediate(resolve));
    expect(reads).toBe(2);
    expect(calls).toEqual([]);
  });

  it("ends normally when the body breaks off after the last finish reason, and with the error event before it", async () => {
    const broken = (text: string) =>
      replyBody(
        (async function* () {
          yield Buffer.from(text);
          throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
        })(),
      );
    let stored = 0;
    const whole = await openEventRelay({ body: broken(sse(chunk("a")) + sse(finish)), errorOf: () => undefined }, { ...OPTIONS, includeUsage: false, keepServiceTier: false, beforeDone: async () => void stored++ });
    let text = "";
    for await (const frame of whole) text += frame;
    expect(text.endsWith(sse(finish) + "data: [DONE]\n\n")).toBe(true);
    expect(stored).toBe(1);
    const cut = await openEventRelay({ body: broken(sse(chunk("a"))), errorOf: () => undefined }, { ...OPTIONS, includeUsage: false, keepServiceTier: false });
    let cutText = "";
    for await (const frame of cut) cutText += frame;
    expect(errorEventOf(cutText)).toMatchObject({ code: "upstream_error" });
    // An error event after the finish reason is still the stream's error.
    const reported = await viaRelay(reads(sse(chunk("a")) + sse(finish) + sse(errorPayload), [Buffer.byteLength(sse(chunk("a")))]));
    expect(errorEventOf(reported.text)?.message).toContain("overloaded");
  });

  it("stores nothing and sends no [DONE] when the client leaves after the last finish reason", async () => {
    let gone = false;
    let reads = 0;
    // The client leaves while the relay waits for the read after the finish reason: the body is aborted.
    const body = scriptedBody(async () => {
      if (reads++ === 0) return { done: false, value: Buffer.from(sse(chunk("a")) + sse(finish)) };
      gone = true;
      throw Object.assign(new Error("The client closed the connection."), { name: "AbortError" });
    });
    let stored = 0;
    const frames = await openEventRelay({ body, errorOf: () => undefined }, { ...OPTIONS, includeUsage: false, keepServiceTier: false, clientGone: () => gone, beforeDone: async () => void stored++ });
    let text = "";
    for await (const frame of frames) text += frame;
    expect(text).not.toContain("[DONE]");
    expect(stored).toBe(0);
  });

  it("ends about a second after the last finish reason when the body sends nothing more (no usage chunk), then destroys it", async () => {
    const body = replyBody(
      (async function* () {
        yield Buffer.from(sse(chunk("a")) + sse(finish));
        await new Promise((resolve) => setTimeout(resolve, 60_000));
        yield Buffer.from(sse(chunk("late")));
      })(),
    );
    let stored = 0;
    const started = Date.now();
    const frames = await openEventRelay({ body, errorOf: () => undefined }, { ...OPTIONS, includeUsage: true, keepServiceTier: false, beforeDone: async () => void stored++ });
    let text = "";
    for await (const frame of frames) text += frame;
    expect(Date.now() - started).toBeLessThan(2500);
    expect(text.endsWith(sse(finish) + "data: [DONE]\n\n")).toBe(true);
    expect(stored).toBe(1);
    expect(body.destroyed).toBe(true);
  });

  it("relays and counts the usage chunk that comes within that second", async () => {
    const body = replyBody(
      (async function* () {
        yield Buffer.from(sse(chunk("a")) + sse(finish));
        await new Promise((resolve) => setTimeout(resolve, 300));
        yield Buffer.from(sse(usageChunk));
        await new Promise((resolve) => setTimeout(resolve, 60_000));
      })(),
    );
    const usage: Usage[] = [];
    const frames = await openEventRelay({ body, errorOf: () => undefined }, { ...OPTIONS, includeUsage: true, keepServiceTier: false, onUsage: (u) => usage.push(u) });
    let text = "";
    for await (const frame of frames) text += frame;
    expect(text).toContain('"choices":[]');
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(usage).toEqual([{ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 }]);
  });

  it("completes a stream without [DONE] at its end, with its usage", async () => {
    const text = sse(chunk("a")) + sse(finish) + sse(usageChunk);
    for (const cuts of [[], [20], every(text).flat()]) {
      const relay = await viaRelay(reads(text, cuts), { includeUsage: true });
      expect(relay.text).toBe((await viaChunks(reads(text, cuts), { includeUsage: true })).text);
      expect(relay.text.endsWith(sse(usageChunk.replace('"service_tier":"default",', "")) + "data: [DONE]\n\n")).toBe(true);
      expect(relay.usage).toEqual([{ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 }]);
    }
    const noUsage = await viaRelay(reads(sse(chunk("a")) + sse(finish), []));
    expect(noUsage.text.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(noUsage.usage).toEqual([]);
  });

  it("ends at the usage chunk after the finish reason when the upstream keeps the body open, then lets go of it", async () => {
    const body = replyBody(
      (async function* () {
        yield Buffer.from(sse(chunk("a")) + sse(finish));
        yield Buffer.from(sse(usageChunk));
        await new Promise((resolve) => setTimeout(resolve, 60_000));
        yield Buffer.from(sse(chunk("late")));
      })(),
    );
    const frames = await openEventRelay({ body, errorOf: () => undefined }, { ...OPTIONS, includeUsage: true, keepServiceTier: false });
    let text = "";
    for await (const frame of frames) text += frame;
    expect(text).toContain('"choices":[]');
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(text).not.toContain("late");
    // Read on for a while (its [DONE] and end may be on their way), then destroyed.
    expect(body.destroyed).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(body.destroyed).toBe(true);
  });

  it("keeps a body whose [DONE] and end come a read after the usage chunk (its connection stays reusable)", async () => {
    let reads = 0;
    const calls: string[] = [];
    const parts = [sse(chunk("a")) + sse(finish) + sse(usageChunk), "data: [DONE]\n\n"];
    const body = scriptedBody(
      async () => {
        const part = parts[reads++];
        if (reads === 2) await new Promise((resolve) => setTimeout(resolve, 30));
        return part === undefined ? { done: true, value: undefined } : { done: false, value: Buffer.from(part) };
      },
      () => calls.push("destroy"),
    );
    const frames = await openEventRelay({ body, errorOf: () => undefined }, { ...OPTIONS, includeUsage: false, keepServiceTier: false });
    let text = "";
    for await (const frame of frames) text += frame;
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(reads).toBe(3);
    expect(calls).toEqual([]);
  });

});
