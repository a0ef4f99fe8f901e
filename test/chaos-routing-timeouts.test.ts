/**
 * Timeouts on the routed path (README, "Routing and resilience"): a target that accepts the
 * request and never answers fails at its provider's `timeout` and is not tried again (a silent
 * target stays silent): the fallback answers. A stream whose first content is later than
 * `timeouts.first_token` goes to the next target; a stream that falls silent after content was
 * sent ends, past `timeouts.idle`, with one error event. Chaos upstreams and the router on real
 * ports; the official openai SDK or raw fetch as the client (`helpers/chaos-router.ts`).
 */
import { describe, expect, it } from "vitest";
import type { ModelmuxConfig } from "@modelmux/core";
import { BACKUP, chat, CLAUDE, expectHealthy, PRIMARY, routed, streamChat, useChaosRouter } from "./helpers/chaos-router.ts";
import { within } from "./helpers/wait.ts";

const rig = useChaosRouter();
const WHOLE = "t0 t1 t2 t3 t4 t5 t6 t7";

/** The primary's provider gives up on a silent call after 1 s. */
const shortTimeout = (config: ModelmuxConfig) => void (config.providers.primary!.timeout = "1s");

describe("a target that hangs (accepts, never answers)", () => {
  it("JSON: fails at the provider's timeout, is not retried, and the fallback answers", async () => {
    const h = await rig.start(shortTimeout);
    rig.primary.script("hang");
    const started = performance.now();
    const { completion, headers } = await chat(h);
    expect(completion.choices[0]!.message.content).toBe(WHOLE);
    expect(completion.id).toMatch(/^chatcmpl-backup-/);
    expect(routed(headers)).toEqual({ model: BACKUP, attempts: "2" });
    expect(rig.primary.attempts.map((a) => a.behaviour)).toEqual(["hang"]);
    expect(rig.backup.attempts).toHaveLength(1);
    // The fallback came after the primary's timeout, not before.
    expect(rig.backup.attempts[0]!.at - rig.primary.attempts[0]!.at).toBeGreaterThanOrEqual(900);
    // The router let go of the hanging connection.
    expect(await within(rig.primary.finished(0), 3_000)).toMatchObject({ aborted: true });
    expect(performance.now() - started).toBeLessThan(6_000);
    await expectHealthy(h);
  });

  it("stream: fails before its headers, is not retried, and the fallback answers the stream", async () => {
    const h = await rig.start(shortTimeout);
    rig.primary.script("hang");
    const started = performance.now();
    const read = await streamChat(h);
    expect(read).toMatchObject({ status: 200, text: WHOLE, finishes: ["stop"], errors: [], done: true });
    expect(routed(read.headers)).toEqual({ model: BACKUP, attempts: "2" });
    expect(rig.primary.attempts).toHaveLength(1);
    expect(rig.backup.attempts).toHaveLength(1);
    // first_token (500 ms) or the timeout (1 s), whichever came first; not at once.
    expect(rig.backup.attempts[0]!.at - rig.primary.attempts[0]!.at).toBeGreaterThanOrEqual(400);
    expect(performance.now() - started).toBeLessThan(6_000);
  });

  it("with the other provider's wire as the fallback (Anthropic): it answers in the client's format", async () => {
    const h = await rig.start((config) => {
      shortTimeout(config);
      config.fallbacks = { [PRIMARY]: [CLAUDE] };
    });
    rig.primary.script("hang");
    const { completion, headers } = await chat(h);
    expect(completion.object).toBe("chat.completion");
    expect(completion.choices[0]!.message.content).toBe(WHOLE);
    expect(completion.model).toBe("claude-chaos-1");
    expect(routed(headers)).toEqual({ model: CLAUDE, attempts: "2" });
    expect(rig.backup.attempts.map((a) => a.path)).toEqual(["/v1/messages"]);
  });
});

describe("first_token", () => {
  // Nothing reaches the client before content: a role-only first chunk does not commit the stream.
  it("a stream whose first token is later than first_token: the fallback answers the stream", async () => {
    const h = await rig.start();
    rig.primary.script({ ok: true, delayFirstTokenMs: 2_000 });
    const started = performance.now();
    const read = await streamChat(h);
    expect(read).toMatchObject({ status: 200, text: WHOLE, finishes: ["stop"], errors: [], done: true });
    expect(routed(read.headers)).toEqual({ model: BACKUP, attempts: "2" });
    expect(rig.primary.attempts).toHaveLength(1);
    expect(rig.backup.attempts).toHaveLength(1);
    expect(rig.backup.attempts[0]!.at - rig.primary.attempts[0]!.at).toBeGreaterThanOrEqual(400);
    // The primary's call was cancelled, not left to run.
    expect(await within(rig.primary.finished(0), 3_000)).toMatchObject({ aborted: true, sent: "" });
    expect(performance.now() - started).toBeLessThan(6_000);
    await expectHealthy(h);
  });

  it("a stream whose first token comes within first_token is answered by its target", async () => {
    const h = await rig.start();
    rig.primary.script({ ok: true, delayFirstTokenMs: 100 });
    const read = await streamChat(h);
    expect(read).toMatchObject({ status: 200, text: WHOLE, finishes: ["stop"], errors: [], done: true });
    expect(routed(read.headers)).toEqual({ model: PRIMARY, attempts: "1" });
    expect(rig.backup.attempts).toHaveLength(0);
  });
});

describe("idle", () => {
  it("a stream that stalls after 3 tokens with the socket open: the 3 tokens, then one error event past idle", async () => {
    // The provider's own timeout (3 s) is longer: the idle timeout (500 ms) is what ends it.
    const h = await rig.start();
    rig.primary.script({ stallAfter: 3 });
    const started = performance.now();
    const read = await streamChat(h);
    expect(read.status).toBe(200);
    expect(read.text).toBe("t0 t1 t2");
    expect(read.errors).toHaveLength(1);
    expect(read.errors[0]).toMatchObject({ code: "upstream_timeout" });
    // The message names the limit that ended it, not the provider's whole-call timeout.
    expect((read.errors[0] as { message: string }).message).toContain("routing.timeouts.idle");
    expect(read.finishes).toEqual([]);
    expect(read.done).toBe(false);
    expect(routed(read.headers)).toEqual({ model: PRIMARY, attempts: "1" });
    expect(rig.backup.attempts).toHaveLength(0);
    expect(performance.now() - started).toBeLessThan(2_500);
    expect(await within(rig.primary.finished(0), 3_000)).toMatchObject({ aborted: true });
    await expectHealthy(h);
  });

  it("a stream paced slower than idle between tokens: the tokens before the gap, then the error event", async () => {
    const h = await rig.start();
    rig.primary.script({ ok: true, gapMs: 1_500 });
    const read = await streamChat(h);
    expect(read.text).toBe("t0");
    expect(read.errors).toEqual([expect.objectContaining({ code: "upstream_timeout" })]);
    expect(read.done).toBe(false);
    expect(read.finishes).toEqual([]);
  });
});
