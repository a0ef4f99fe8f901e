/**
 * Stream continuation (README, "Routing and resilience"): a stream that breaks after the client
 * has some of the answer is finished by a target with the `prefill` capability, in the same
 * stream: same id, no repeated or missing text, one finish reason. The chaos upstreams answer
 * `t0 t1 … t7` and continue a final assistant message from where it ends, so the whole answer
 * shows whether anything was lost or repeated.
 */
import { createParser } from "eventsource-parser";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import { describe, expect, it } from "vitest";
import type { ModelmuxConfig } from "@modelmux/core";
import { ASK, BACKUP, CLAUDE, expectHealthy, PRIMARY, routed, streamChat, useChaosRouter } from "./helpers/chaos-router.ts";
import { postJson, type Harness } from "./helpers/harness.ts";
import { createLogger } from "../core/src/logger.ts";
import { sleep, within } from "./helpers/wait.ts";

const rig = useChaosRouter();
const WHOLE = "t0 t1 t2 t3 t4 t5 t6 t7";

/** The backup's model continues answers. */
function backupPrefills(config: ModelmuxConfig): void {
  config.providers.backup!.capabilities = { prefill: true };
}

/** Every chunk of a raw stream read, parsed (error events and `[DONE]` left out). */
async function chunksOf(h: Harness, body: Record<string, unknown>): Promise<{ chunks: ChatCompletionChunk[]; events: string[] }> {
  const response = await h.request("/v1/chat/completions", { ...postJson({ model: PRIMARY, messages: ASK, stream: true, ...body }), signal: AbortSignal.timeout(15_000) });
  const events: string[] = [];
  createParser({ onEvent: ({ data }) => void events.push(data) }).feed(await response.text());
  const chunks = events.filter((data) => data !== "[DONE]" && !data.includes('"error"')).map((data) => JSON.parse(data) as ChatCompletionChunk);
  return { chunks, events };
}

describe("a stream that breaks after content, with a target that can continue it", () => {
  it("cut after 3 tokens: the backup continues; the client reads one whole answer", async () => {
    const h = await rig.start(backupPrefills);
    rig.primary.script({ cutAfter: 3 });
    const started = performance.now();
    const read = await streamChat(h);
    expect(read).toMatchObject({ status: 200, text: WHOLE, finishes: ["stop"], errors: [], done: true });
    // The headers went out with the first attempt's content.
    expect(routed(read.headers)).toEqual({ model: PRIMARY, attempts: "1" });
    expect(rig.primary.attempts).toHaveLength(1);
    expect(rig.backup.attempts).toHaveLength(1);
    expect(rig.backup.attempts[0]!.prefill).toBe("t0 t1 t2");
    expect(performance.now() - started).toBeLessThan(5_000);
    await expectHealthy(h);
  });

  it("the access log lists the broken attempt and the continuation", async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: "info", format: "json", write: (text) => lines.push(text) });
    const h = await rig.start(backupPrefills, { logger });
    rig.primary.script({ cutAfter: 3 });
    await streamChat(h);
    await h.close();
    logger.flush();
    const access = lines.flatMap((text) => text.split("\n")).filter((line) => line.includes("/v1/chat/completions")).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(access).toHaveLength(1);
    expect(access[0]).toMatchObject({ status: 200, model: PRIMARY });
    expect(access[0]!.attempts).toMatch(/^primary\/gpt-4o next \d+ms, backup\/gpt-4o ok \d+ms$/);
  });

  it("keeps the stream's id, model and created, and sends the role once", async () => {
    const h = await rig.start(backupPrefills);
    rig.primary.script({ cutAfter: 3 });
    const { chunks } = await chunksOf(h, {});
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    expect(chunks[0]!.id).toMatch(/^chatcmpl-primary-/);
    expect(new Set(chunks.map((chunk) => chunk.model)).size).toBe(1);
    expect(new Set(chunks.map((chunk) => chunk.created)).size).toBe(1);
    expect(chunks.filter((chunk) => chunk.choices[0]?.delta.role !== undefined)).toHaveLength(1);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("")).toBe(WHOLE);
  });

  it.each([
    ["a stall (idle)", { stallAfter: 3 }],
    ["an unreadable event", { malformedAfter: 3, then: "continue" as const }],
    ["the provider's error event", { errorAfter: 3, message: "fell over" }],
  ])("%s after 3 tokens: continued the same way", async (_name, behaviour) => {
    const h = await rig.start(backupPrefills);
    rig.primary.script(behaviour);
    const read = await streamChat(h);
    expect(read).toMatchObject({ status: 200, text: WHOLE, finishes: ["stop"], errors: [], done: true });
    expect(rig.backup.attempts.map((attempt) => attempt.prefill)).toEqual(["t0 t1 t2"]);
    await expectHealthy(h);
  });

  it("text that ends in a space: the prefill has none, and the space is not sent twice", async () => {
    const h = await rig.start(backupPrefills);
    rig.primary.script({ cutAfter: 3, spacing: "trailing" });
    rig.backup.script({ ok: true, spacing: "trailing" });
    const read = await streamChat(h);
    expect(read).toMatchObject({ text: "t0 t1 t2 t3 t4 t5 t6 t7", finishes: ["stop"], errors: [], done: true });
    expect(rig.backup.attempts[0]!.prefill).toBe("t0 t1 t2");
  });

  it("an Anthropic target continues an OpenAI-compatible stream", async () => {
    const h = await rig.start((config) => {
      config.providers.claude!.capabilities = { prefill: true };
      config.fallbacks = { [PRIMARY]: [CLAUDE] };
    });
    rig.primary.script({ cutAfter: 3, spacing: "trailing" });
    rig.backup.script({ ok: true, spacing: "trailing" });
    const read = await streamChat(h);
    expect(read).toMatchObject({ text: WHOLE, finishes: ["stop"], errors: [], done: true });
    // Anthropic refuses a prefill that ends in whitespace: none was sent.
    expect(rig.backup.attempts[0]!.prefill).toBe("t0 t1 t2");
    expect(rig.backup.attempts[0]!.path).toBe("/v1/messages");
  });

  it("usage: one usage chunk, the continuation's added to what the broken attempt reported", async () => {
    const h = await rig.start(backupPrefills);
    rig.primary.script({ cutAfter: 3 });
    const { chunks } = await chunksOf(h, { stream_options: { include_usage: true } });
    const usages = chunks.filter((chunk) => chunk.usage);
    expect(usages).toHaveLength(1);
    // The cut attempt reported none: the usage is the continuation's (10 prompt tokens, the prefill's 3, and its 5).
    expect(usages[0]!.usage).toMatchObject({ completion_tokens: 5 });
  });

  it("store: true keeps the whole answer, under the model that began it", async () => {
    const h = await rig.start((config) => {
      backupPrefills(config);
      config.storage = { plugin: "storage-unstorage", options: { driver: "memory" } };
    });
    rig.primary.script({ cutAfter: 3 });
    const { chunks } = await chunksOf(h, { store: true });
    const id = chunks[0]!.id;
    const stored = await h.openai.chat.completions.retrieve(id);
    expect(stored.choices[0]!.message.content).toBe(WHOLE);
    expect(stored.choices[0]!.finish_reason).toBe("stop");
    expect(stored.model).toBe(chunks[0]!.model);
    const { data } = await h.openai.chat.completions.list({ model: PRIMARY });
    expect(data.map((completion) => completion.id)).toContain(id);
  });

  it("the openai SDK streams a repaired answer as one unbroken completion", async () => {
    const h = await rig.start(backupPrefills);
    rig.primary.script({ cutAfter: 4 });
    const stream = h.openai.chat.completions.stream({ model: PRIMARY, messages: ASK });
    const completion = await stream.finalChatCompletion();
    expect(completion.choices[0]!.message.content).toBe(WHOLE);
    expect(completion.choices[0]!.finish_reason).toBe("stop");
  });
});

describe("when no target can continue", () => {
  it("a target that refuses the prefill: the next one continues", async () => {
    const h = await rig.start((config) => {
      backupPrefills(config);
      config.providers.claude!.capabilities = { prefill: true };
      config.fallbacks = { [PRIMARY]: [BACKUP, CLAUDE] };
    });
    rig.primary.script({ cutAfter: 3 });
    // The backup serves both the OpenAI-compatible and the Anthropic model: it refuses the first continuation.
    rig.backup.script("refusePrefill", "ok");
    const read = await streamChat(h);
    expect(read).toMatchObject({ text: WHOLE, finishes: ["stop"], errors: [], done: true });
    expect(rig.backup.attempts.map((attempt) => [attempt.path, attempt.status])).toEqual([
      ["/v1/chat/completions", 400],
      ["/v1/messages", 200],
    ]);
  });

  it("every target refuses: the one error event of the break, no [DONE], no finish reason", async () => {
    const h = await rig.start(backupPrefills);
    rig.primary.script({ cutAfter: 3 });
    rig.backup.script("refusePrefill");
    const read = await streamChat(h);
    expect(read).toMatchObject({ status: 200, text: "t0 t1 t2", finishes: [], done: false });
    expect(read.errors).toHaveLength(1);
    expect(read.errors[0]).toMatchObject({ code: "upstream_error" });
    await expectHealthy(h);
  });

  it("no target has prefill: the stream ends with its error event, and no one is asked", async () => {
    const h = await rig.start();
    rig.primary.script({ cutAfter: 3 });
    const read = await streamChat(h);
    expect(read).toMatchObject({ text: "t0 t1 t2", finishes: [], done: false });
    expect(read.errors).toHaveLength(1);
    expect(rig.backup.attempts).toHaveLength(0);
  });

  it("a continuation that breaks too is continued by the next target", async () => {
    const h = await rig.start((config) => {
      backupPrefills(config);
      config.providers.claude!.capabilities = { prefill: true };
      config.fallbacks = { [PRIMARY]: [BACKUP, CLAUDE] };
    });
    rig.primary.script({ cutAfter: 2 });
    rig.backup.script({ cutAfter: 2 }, "ok");
    const read = await streamChat(h);
    expect(read).toMatchObject({ text: WHOLE, finishes: ["stop"], errors: [], done: true });
    expect(rig.backup.attempts.map((attempt) => attempt.prefill)).toEqual(["t0 t1", "t0 t1 t2 t3"]);
  });
});

describe("bounds", () => {
  it("a continuation that sends nothing within first_token: the stream ends with the break's error event", async () => {
    const h = await rig.start(backupPrefills);
    rig.primary.script({ cutAfter: 3 });
    rig.backup.script({ ok: true, delayFirstTokenMs: 5_000 });
    const started = performance.now();
    const read = await streamChat(h);
    expect(read).toMatchObject({ text: "t0 t1 t2", finishes: [], done: false });
    expect(read.errors).toHaveLength(1);
    // first_token is 500 ms in the rig, and a timed-out target is not tried again.
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(rig.backup.attempts).toHaveLength(1);
    expect(await within(rig.backup.finished(0), 3_000)).toMatchObject({ aborted: true });
  });

  it("a client that leaves while the continuation is awaited: the continuation's call is dropped", async () => {
    const h = await rig.start(backupPrefills);
    rig.primary.script({ cutAfter: 3 });
    rig.backup.script({ ok: true, delayFirstTokenMs: 5_000 });
    const leaving = new AbortController();
    const response = await h.request("/v1/chat/completions", { ...postJson({ model: PRIMARY, messages: ASK, stream: true }), signal: leaving.signal });
    const reading = response.text().catch((error: unknown) => error);
    await rig.backup.attempt(0);
    leaving.abort();
    await reading;
    expect(await within(rig.backup.finished(0), 3_000)).toMatchObject({ aborted: true });
    await sleep(300);
    expect(rig.backup.attempts).toHaveLength(1);
    await expectHealthy(h);
  });
});
