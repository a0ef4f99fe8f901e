/**
 * Streams that break (README, "Routing and resilience" and "Errors"): before the client has a
 * byte, a failure goes to the next target; after it, nothing is retried and the stream ends with
 * the one error event, never a `[DONE]` or a `finish_reason`. No target here has the `prefill`
 * capability, so a cut stream is not continued (`chaos-routing-continuation.test.ts` continues
 * them) and ends with its error event. A stream that is whole but
 * lacks `[DONE]` gets the router's own. Chaos upstreams and the router on real ports, raw fetch
 * as the client (`helpers/chaos-router.ts`), so what an SDK would forgive shows.
 */
import { describe, expect, it } from "vitest";
import { BACKUP, CLAUDE, expectHealthy, PRIMARY, routed, streamChat, useChaosRouter } from "./helpers/chaos-router.ts";

const rig = useChaosRouter();
const WHOLE = "t0 t1 t2 t3 t4 t5 t6 t7";

describe("a stream cut after content was sent", () => {
  it("cut after 3 tokens without a final chunk: the 3 tokens, then one error event, no [DONE], no finish_reason", async () => {
    const h = await rig.start();
    rig.primary.script({ cutAfter: 3 });
    const started = performance.now();
    const read = await streamChat(h);
    expect(read.status).toBe(200);
    expect(read.text).toBe("t0 t1 t2");
    expect(read.errors).toHaveLength(1);
    expect(read.errors[0]).toMatchObject({ type: "api_error", code: "upstream_error" });
    expect(read.finishes).toEqual([]);
    expect(read.done).toBe(false);
    // The error event is the last event.
    expect(JSON.parse(read.events.at(-1)!)).toHaveProperty("error");
    expect(routed(read.headers)).toEqual({ model: PRIMARY, attempts: "1" });
    // No target can continue the answer: none is asked to.
    expect(rig.primary.attempts).toHaveLength(1);
    expect(rig.backup.attempts).toHaveLength(0);
    expect(performance.now() - started).toBeLessThan(5_000);
    await expectHealthy(h);
  });

  it("an Anthropic stream cut after 3 tokens ends the same way in the client's format", async () => {
    const h = await rig.start();
    rig.backup.script({ cutAfter: 3 });
    const read = await streamChat(h, CLAUDE);
    expect(read.status).toBe(200);
    expect(read.text).toBe("t0 t1 t2");
    expect(read.errors).toHaveLength(1);
    expect(read.finishes).toEqual([]);
    expect(read.done).toBe(false);
    expect(routed(read.headers)).toEqual({ model: CLAUDE, attempts: "1" });
    expect(rig.backup.attempts).toHaveLength(1);
  });

  it("the provider's error event after 3 tokens: the 3 tokens, then that error as the one error event", async () => {
    const h = await rig.start();
    rig.primary.script({ errorAfter: 3, message: "The primary fell over mid-answer." });
    const read = await streamChat(h);
    expect(read.text).toBe("t0 t1 t2");
    expect(read.errors).toHaveLength(1);
    expect(read.errors[0]!.message).toContain("The primary fell over mid-answer.");
    expect(read.finishes).toEqual([]);
    expect(read.done).toBe(false);
    expect(rig.backup.attempts).toHaveLength(0);
    await expectHealthy(h);
  });
});

describe("an unreadable event", () => {
  // Nothing reaches the client before content: a role-only first chunk does not commit the stream.
  it("as the first event after the role chunk, before any text: the next target answers the stream", async () => {
    const h = await rig.start();
    rig.primary.script({ malformedAfter: 0 });
    const read = await streamChat(h);
    expect(read).toMatchObject({ status: 200, text: WHOLE, finishes: ["stop"], errors: [], done: true });
    expect(routed(read.headers)).toEqual({ model: BACKUP, attempts: "2" });
    expect(rig.primary.attempts).toHaveLength(1);
    expect(rig.backup.attempts).toHaveLength(1);
    await expectHealthy(h);
  });

  it("mid-stream after 3 tokens: the 3 tokens, then one error event; nothing after it is passed on", async () => {
    const h = await rig.start();
    rig.primary.script({ malformedAfter: 3, then: "continue" });
    const read = await streamChat(h);
    expect(read.status).toBe(200);
    expect(read.text).toBe("t0 t1 t2");
    expect(read.errors).toHaveLength(1);
    expect(read.errors[0]).toMatchObject({ code: "upstream_error" });
    expect(read.finishes).toEqual([]);
    expect(read.done).toBe(false);
    expect(routed(read.headers)).toEqual({ model: PRIMARY, attempts: "1" });
    expect(rig.backup.attempts).toHaveLength(0);
    await expectHealthy(h);
  });
});

describe("a stream without [DONE]", () => {
  it("whole (finish reason and all) but without [DONE]: the router adds its own", async () => {
    const h = await rig.start();
    rig.primary.script("noDone");
    const started = performance.now();
    const read = await streamChat(h);
    expect(read).toMatchObject({ status: 200, text: WHOLE, finishes: ["stop"], errors: [], done: true });
    expect(read.events.at(-1)).toBe("[DONE]");
    expect(read.events.filter((data) => data === "[DONE]")).toHaveLength(1);
    expect(routed(read.headers)).toEqual({ model: PRIMARY, attempts: "1" });
    expect(rig.backup.attempts).toHaveLength(0);
    // The router's grace is at most a second; the provider's timeout is 3 s.
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe("a stream that fails before its first byte", () => {
  it("a 503 on the stream's request: retried, and the whole stream comes from the same target", async () => {
    const h = await rig.start();
    rig.primary.script({ status: 503 });
    const read = await streamChat(h);
    expect(read).toMatchObject({ status: 200, text: WHOLE, finishes: ["stop"], errors: [], done: true });
    expect(routed(read.headers)).toEqual({ model: PRIMARY, attempts: "2" });
    expect(rig.primary.attempts.map((a) => a.status)).toEqual([503, 200]);
  });

  // Nothing reaches the client before content: a role-only first chunk does not commit the stream.
  it("cut before its first token: the next target answers the stream", async () => {
    const h = await rig.start();
    rig.primary.script({ cutAfter: 0 });
    const read = await streamChat(h);
    expect(read).toMatchObject({ status: 200, text: WHOLE, finishes: ["stop"], errors: [], done: true });
    expect(routed(read.headers)).toEqual({ model: BACKUP, attempts: "2" });
    expect(rig.primary.attempts).toHaveLength(1);
    expect(rig.backup.attempts).toHaveLength(1);
  });

  // Nothing reaches the client before content: a role-only first chunk does not commit the stream.
  it("an Anthropic stream cut before its first token: the next target answers the stream", async () => {
    const h = await rig.start((config) => (config.fallbacks = { [CLAUDE]: [PRIMARY] }));
    rig.backup.script({ cutAfter: 0 });
    const read = await streamChat(h, CLAUDE);
    expect(read).toMatchObject({ status: 200, text: WHOLE, finishes: ["stop"], errors: [], done: true });
    expect(routed(read.headers)).toEqual({ model: PRIMARY, attempts: "2" });
    expect(rig.backup.attempts).toHaveLength(1);
    expect(rig.primary.attempts).toHaveLength(1);
  });
});
