/**
 * Retries on one target and fallback to the next (README, "Routing and resilience"): a 429 with or
 * without `Retry-After` / `retry-after-ms` is retried after the wait the provider asked for (or the
 * backoff), a wait longer than `max_retry_after` sends the request to the next target at once, an
 * error that does not pass goes to the fallback after the retries, and a 500 or a connection reset
 * before any reply byte is retried. The chaos upstreams and the router run on real ports; the
 * official openai SDK is the client (`helpers/chaos-router.ts`).
 */
import { describe, expect, it } from "vitest";
import { CHAOS_ERRORS } from "./helpers/chaos-upstream.ts";
import { BACKUP, chat, expectHealthy, gaps, PRIMARY, routed, useChaosRouter } from "./helpers/chaos-router.ts";

const rig = useChaosRouter();
const WHOLE = "t0 t1 t2 t3 t4 t5 t6 t7";

describe("a 429 once", () => {
  it("with Retry-After in seconds: waits it, then the same target answers", async () => {
    const h = await rig.start();
    rig.primary.script({ ...CHAOS_ERRORS.rateLimit, retryAfter: "1" });
    const started = performance.now();
    const { completion, headers } = await chat(h);
    expect(completion.choices[0]!.message.content).toBe(WHOLE);
    expect(routed(headers)).toEqual({ model: PRIMARY, attempts: "2" });
    expect(rig.primary.attempts.map((a) => a.status)).toEqual([429, 200]);
    expect(rig.backup.attempts).toHaveLength(0);
    expect(gaps(rig.primary)[0]).toBeGreaterThanOrEqual(950);
    expect(performance.now() - started).toBeLessThan(6_000);
    await expectHealthy(h);
  });

  it("with retry-after-ms: waits that (preferred over Retry-After), then the same target answers", async () => {
    const h = await rig.start();
    rig.primary.script({ ...CHAOS_ERRORS.rateLimit, retryAfter: "20", retryAfterMs: 600 });
    const started = performance.now();
    const { completion, headers } = await chat(h);
    expect(completion.choices[0]!.message.content).toBe(WHOLE);
    expect(routed(headers)).toEqual({ model: PRIMARY, attempts: "2" });
    expect(rig.primary.attempts.map((a) => a.status)).toEqual([429, 200]);
    expect(gaps(rig.primary)[0]).toBeGreaterThanOrEqual(570);
    // Not the 20 s of Retry-After.
    expect(performance.now() - started).toBeLessThan(6_000);
    await expectHealthy(h);
  });

  it("without Retry-After: the backoff, then the same target answers", async () => {
    const h = await rig.start();
    rig.primary.script(CHAOS_ERRORS.rateLimit);
    const started = performance.now();
    const { completion, headers } = await chat(h);
    expect(completion.choices[0]!.message.content).toBe(WHOLE);
    expect(routed(headers)).toEqual({ model: PRIMARY, attempts: "2" });
    expect(rig.primary.attempts.map((a) => a.status)).toEqual([429, 200]);
    expect(rig.backup.attempts).toHaveLength(0);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it("with a Retry-After longer than max_retry_after: the next target at once, no wait", async () => {
    const h = await rig.start();
    rig.primary.script({ ...CHAOS_ERRORS.rateLimit, retryAfter: "30" });
    const started = performance.now();
    const { completion, headers } = await chat(h);
    expect(completion.choices[0]!.message.content).toBe(WHOLE);
    expect(completion.id).toMatch(/^chatcmpl-backup-/);
    expect(routed(headers)).toEqual({ model: BACKUP, attempts: "2" });
    expect(rig.primary.attempts).toHaveLength(1);
    expect(rig.backup.attempts).toHaveLength(1);
    // Far from the 30 s asked for (and from max_retry_after's 5 s).
    expect(rig.backup.attempts[0]!.at - rig.primary.attempts[0]!.at).toBeLessThan(3_000);
    expect(performance.now() - started).toBeLessThan(4_000);
    await expectHealthy(h);
  });
});

describe("an error that does not pass", () => {
  for (const [name, error] of [
    ["429", CHAOS_ERRORS.rateLimit],
    ["503", CHAOS_ERRORS.unavailable],
  ] as const) {
    it(`${name} forever: the primary's first try and its 2 retries, spaced by the backoff, then the fallback answers`, async () => {
      const h = await rig.start((config) => (config.routing!.retry!.backoff = "100ms"));
      rig.primary.setDefault(error);
      const started = performance.now();
      const { completion, headers } = await chat(h);
      expect(completion.choices[0]!.message.content).toBe(WHOLE);
      expect(completion.model).toBe("gpt-4o");
      // The usage is the answering attempt's: the failed ones produced nothing.
      expect(completion.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 8, total_tokens: 18 });
      expect(routed(headers)).toEqual({ model: BACKUP, attempts: "4" });
      expect(rig.primary.attempts.map((a) => a.status)).toEqual([error.status, error.status, error.status]);
      expect(rig.backup.attempts.map((a) => a.status)).toEqual([200]);
      // Full jitter allows any wait from 0: the only lower bound is that they came in order.
      for (const gap of gaps(rig.primary)) expect(gap).toBeGreaterThanOrEqual(0);
      expect(performance.now() - started).toBeLessThan(5_000);
      // The primary is healthy again: its script said "forever", so point it back.
      rig.primary.setDefault("ok");
      await expectHealthy(h);
    });
  }

  it("with a Retry-After each time: every retry waits what the provider asked for", async () => {
    const h = await rig.start();
    rig.primary.setDefault({ ...CHAOS_ERRORS.unavailable, retryAfterMs: 300 });
    const { headers } = await chat(h);
    expect(routed(headers)).toEqual({ model: BACKUP, attempts: "4" });
    expect(rig.primary.attempts).toHaveLength(3);
    for (const gap of gaps(rig.primary)) expect(gap).toBeGreaterThanOrEqual(280);
    // The fallback is not held back by the primary's wait: it is another target.
    expect(rig.backup.attempts[0]!.at - rig.primary.attempts[2]!.at).toBeLessThan(3_000);
  });
});

describe("passing failures", () => {
  it("a 500 once is retried on the same target", async () => {
    const h = await rig.start();
    rig.primary.script(CHAOS_ERRORS.serverError);
    const { completion, headers } = await chat(h);
    expect(completion.choices[0]!.message.content).toBe(WHOLE);
    expect(routed(headers)).toEqual({ model: PRIMARY, attempts: "2" });
    expect(rig.primary.attempts.map((a) => a.status)).toEqual([500, 200]);
    expect(rig.backup.attempts).toHaveLength(0);
    await expectHealthy(h);
  });

  it("a 529 once is retried on the same target", async () => {
    const h = await rig.start();
    rig.primary.script(CHAOS_ERRORS.overloaded);
    const { headers } = await chat(h);
    expect(routed(headers)).toEqual({ model: PRIMARY, attempts: "2" });
    expect(rig.primary.attempts.map((a) => a.status)).toEqual([529, 200]);
  });

  it("a TCP reset before the headers is retried on the same target", async () => {
    const h = await rig.start();
    rig.primary.script("reset");
    const started = performance.now();
    const { completion, headers } = await chat(h);
    expect(completion.choices[0]!.message.content).toBe(WHOLE);
    expect(routed(headers)).toEqual({ model: PRIMARY, attempts: "2" });
    expect(rig.primary.attempts.map((a) => a.behaviour)).toEqual(["reset", "ok"]);
    expect(rig.backup.attempts).toHaveLength(0);
    expect(performance.now() - started).toBeLessThan(5_000);
    await expectHealthy(h);
  });

  it("a reset on a stream before its headers is retried too", async () => {
    const h = await rig.start();
    rig.primary.script("reset");
    const stream = await h.openai.chat.completions.create({ model: PRIMARY, messages: [{ role: "user", content: "count" }], stream: true }).withResponse();
    let text = "";
    for await (const chunk of stream.data) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe(WHOLE);
    expect(routed(stream.response.headers)).toEqual({ model: PRIMARY, attempts: "2" });
    expect(rig.primary.attempts.map((a) => a.behaviour)).toEqual(["reset", "ok"]);
  });
});
