/**
 * Errors that end the routing, or send it on (README, "Routing and resilience"): a 400
 * `context_length_exceeded` goes to the next target and never to the same one; a content-policy
 * refusal is returned as it is, with the provider's reason; when every target failed, the client
 * gets the error of the last attempt that reached a provider, in the envelope, never a hang; a
 * client that leaves stops every attempt, waits included. Chaos upstreams and the router on real
 * ports, the official openai SDK as the client (`helpers/chaos-router.ts`).
 */
import { describe, expect, it } from "vitest";
import { CHAOS_ERRORS } from "./helpers/chaos-upstream.ts";
import { BACKUP, chat, expectHealthy, failure, PRIMARY, routed, streamChat, useChaosRouter } from "./helpers/chaos-router.ts";
import { sleep, within } from "./helpers/wait.ts";

const rig = useChaosRouter();
const WHOLE = "t0 t1 t2 t3 t4 t5 t6 t7";

describe("400 context_length_exceeded", () => {
  it("goes to the next target at once; the primary is tried once", async () => {
    const h = await rig.start();
    rig.primary.script(CHAOS_ERRORS.contextLengthExceeded);
    const { completion, headers } = await chat(h);
    expect(completion.choices[0]!.message.content).toBe(WHOLE);
    expect(routed(headers)).toEqual({ model: BACKUP, attempts: "2" });
    expect(rig.primary.attempts.map((a) => a.status)).toEqual([400]);
    expect(rig.backup.attempts.map((a) => a.status)).toEqual([200]);
    await expectHealthy(h);
  });

  it("on every target: the last one's 400, with its code and message", async () => {
    const h = await rig.start();
    rig.primary.script(CHAOS_ERRORS.contextLengthExceeded);
    rig.backup.script({ ...CHAOS_ERRORS.contextLengthExceeded, message: "The backup's context is 8k tokens." });
    const error = await failure(chat(h));
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ type: "invalid_request_error", code: "context_length_exceeded" });
    expect(error.message).toContain("The backup's context is 8k tokens.");
    expect(rig.primary.attempts).toHaveLength(1);
    expect(rig.backup.attempts).toHaveLength(1);
  });
});

describe("a content-policy refusal", () => {
  it("is returned as it is, with the provider's reason; no retry, no fallback", async () => {
    const h = await rig.start();
    rig.primary.script(CHAOS_ERRORS.contentPolicy);
    const error = await failure(chat(h));
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ type: "invalid_request_error", code: "content_policy_violation" });
    expect(error.message).toContain("rejected as a result of our safety system");
    expect(rig.primary.attempts).toHaveLength(1);
    expect(rig.backup.attempts).toHaveLength(0);
    await expectHealthy(h);
  });

  it("on a stream: the same error as the reply's status, no fallback", async () => {
    const h = await rig.start();
    rig.primary.script(CHAOS_ERRORS.contentPolicy);
    const read = await streamChat(h);
    expect(read.status).toBe(400);
    expect(read.body).toMatchObject({ error: { type: "invalid_request_error", code: "content_policy_violation" } });
    expect(rig.backup.attempts).toHaveLength(0);
  });
});

describe("every target failing", () => {
  it("503 everywhere: the last attempt's error (the backup's 503 as 502 upstream_error with its message), no hang", async () => {
    const h = await rig.start();
    rig.primary.setDefault({ ...CHAOS_ERRORS.unavailable, message: "The primary is overloaded." });
    rig.backup.setDefault({ ...CHAOS_ERRORS.unavailable, message: "The backup is overloaded." });
    const started = performance.now();
    const error = await failure(chat(h));
    expect(error.status).toBe(502);
    expect(error.error).toMatchObject({ type: "api_error", code: "upstream_error" });
    expect(error.message).toContain("The backup is overloaded.");
    expect(error.message).not.toContain("primary");
    expect(rig.primary.attempts).toHaveLength(3);
    expect(rig.backup.attempts).toHaveLength(3);
    expect(performance.now() - started).toBeLessThan(5_000);
    rig.primary.setDefault("ok");
    await expectHealthy(h);
  });

  // An error reply is routed too: it says how many calls were made (no model answered, so no x-modelmux-model).
  it("503 everywhere: the error reply says how many calls were made (x-modelmux-attempts)", async () => {
    const h = await rig.start();
    rig.primary.setDefault(CHAOS_ERRORS.unavailable);
    rig.backup.setDefault(CHAOS_ERRORS.unavailable);
    const error = await failure(chat(h));
    expect(error.status).toBe(502);
    expect(error.headers?.get("x-modelmux-attempts")).toBe("6");
    expect(error.headers?.get("x-modelmux-model")).toBeNull();
  });

  it("a 503 then a hang: the hang's timeout (504), the last attempt that reached a provider", async () => {
    const h = await rig.start((config) => (config.providers.backup!.timeout = "1s"));
    rig.primary.setDefault(CHAOS_ERRORS.unavailable);
    rig.backup.script("hang");
    const started = performance.now();
    const error = await failure(chat(h));
    expect(error.status).toBe(504);
    expect(error.error).toMatchObject({ code: "upstream_timeout" });
    expect(error.message).toContain("backup");
    expect(rig.backup.attempts).toHaveLength(1);
    expect(performance.now() - started).toBeLessThan(6_000);
  });

  it("a stream on 429 everywhere: the reply's status is the last 429, not a 200 with an error event", async () => {
    const h = await rig.start();
    rig.primary.setDefault(CHAOS_ERRORS.rateLimit);
    rig.backup.setDefault({ ...CHAOS_ERRORS.rateLimit, message: "The backup's rate limit." });
    const read = await streamChat(h);
    expect(read.status).toBe(429);
    expect(read.body).toMatchObject({ error: { type: "rate_limit_error", code: "rate_limit_exceeded" } });
    expect(JSON.stringify(read.body)).toContain("The backup's rate limit.");
    expect(rig.primary.attempts).toHaveLength(3);
    expect(rig.backup.attempts).toHaveLength(3);
  });
});

describe("a client that leaves", () => {
  it("during a Retry-After wait: no attempt after it, on any target", async () => {
    const h = await rig.start();
    rig.primary.script({ ...CHAOS_ERRORS.rateLimit, retryAfter: "1" });
    const leaving = new AbortController();
    const call = chat(h, PRIMARY, leaving.signal).catch((error: unknown) => error);
    await rig.primary.attempt(0);
    await sleep(200);
    leaving.abort();
    expect(await call).toBeInstanceOf(Error);
    // Well past the 1 s the retry would have come at.
    await sleep(1_500);
    expect(rig.primary.attempts).toHaveLength(1);
    expect(rig.backup.attempts).toHaveLength(0);
    await expectHealthy(h);
  });

  it("during an attempt: the upstream call is dropped and no fallback is tried", async () => {
    const h = await rig.start();
    rig.primary.script("hang");
    const leaving = new AbortController();
    const call = chat(h, PRIMARY, leaving.signal).catch((error: unknown) => error);
    await rig.primary.attempt(0);
    leaving.abort();
    await call;
    expect(await within(rig.primary.finished(0), 3_000)).toMatchObject({ aborted: true });
    await sleep(300);
    expect(rig.primary.attempts).toHaveLength(1);
    expect(rig.backup.attempts).toHaveLength(0);
    await expectHealthy(h);
  });
});
