/**
 * The attempts of one request (core/src/routing/attempts.ts), with an injected clock, sleep and
 * random number: retries then success, a 429's Retry-After waited (and recorded), a timeout or a
 * too-long context going to the next target, a content-policy refusal returned as it is, the last
 * real error when all fail, the client leaving mid-wait, skipped targets, and all circuits open.
 * The failures are the errors the core makes of upstream replies (`providerError`, `upstreamTimeout`).
 */
import { describe, expect, it } from "vitest";
import { invalidRequest, ModelmuxError, providerError, rateLimited, upstreamTimeout } from "../src/errors.ts";
import { RequestAbort } from "../src/server/request-abort.ts";
import { attemptsOf, runAttempts, type AttemptOptions } from "../src/routing/attempts.ts";
import { CircuitBreakers } from "../src/routing/circuit-breaker.ts";
import type { Target } from "../src/routing/types.ts";
import { fakeTarget } from "./fixtures/routing-targets.ts";

type Step = string | Error;

/**
 * A request's world: a clock that only sleeps move, the sleeps asked for, and `run`, which plays
 * each target's script of answers (a string) and failures (an error) in order, each taking 5 ms.
 */
function world(scripts: Record<string, Step[]>, options: Partial<AttemptOptions> = {}) {
  const clock = { now: 0 };
  const sleeps: number[] = [];
  const calls: string[] = [];
  const abort = new RequestAbort();
  const breakers = options.breakers ?? new CircuitBreakers(() => clock.now);
  const run = async (target: Target, attempt: number): Promise<string> => {
    calls.push(`${attempt}:${target.entry.name}`);
    const step = scripts[target.entry.name]?.shift();
    clock.now += 5;
    if (step === undefined) throw new Error(`no step left for ${target.entry.name}`);
    if (step instanceof Error) throw step;
    return step;
  };
  const opts: AttemptOptions = {
    breakers,
    abort,
    now: () => clock.now,
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
      clock.now += ms;
    },
    ...options,
  };
  return { clock, sleeps, calls, abort, breakers, run, opts, go: (targets: Target[]) => runAttempts(targets, run, opts) };
}

const status = (code: number, extra: { retryAfter?: string; retryAfterMs?: number; code?: string } = {}) =>
  providerError("p", { status: code, message: `status ${code}`, ...extra });
const retrying = (name: string, attempts = 2) => fakeTarget(name, { retry: { attempts } });

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail("expected the attempts to fail"),
    (error: unknown) => error,
  );
}

describe("runAttempts", () => {
  it("answers on the first try with one record, and no wait", async () => {
    const w = world({ "p/a": ["hello"] });
    const a = retrying("p/a");
    const result = await w.go([a]);
    expect(result).toEqual({ value: "hello", target: a, attempts: [{ target: "p/a", outcome: "ok", durationMs: 5, waitMs: 0 }] });
    expect(w.sleeps).toEqual([]);
  });

  it("takes each failed attempt's error as `failed` maps it, once per attempt, before it is classified", async () => {
    const seen: string[] = [];
    const final = invalidRequest("mapped");
    // The first 503 is mapped to a final error on its second try: no third call, and the mapped error thrown.
    const w = world({ "p/a": [status(503), status(503), "never"] }, {
      failed: (target, error) => {
        seen.push(`${target.entry.name} ${(error as ModelmuxError).upstream?.status}`);
        return seen.length === 2 ? final : error;
      },
    });
    const error = await failure(w.go([retrying("p/a")]));
    expect(error).toBe(final);
    expect(seen).toEqual(["p/a 503", "p/a 503"]);
    expect(w.calls).toEqual(["1:p/a", "2:p/a"]);
    expect(attemptsOf(error)?.map((r) => r.outcome)).toEqual(["retryable", "final"]);
  });

  it("retries a 503 with backoff, then answers", async () => {
    const w = world({ "p/a": [status(503), status(500), "ok"] });
    const result = await w.go([retrying("p/a")]);
    expect(result.value).toBe("ok");
    // random 0.5: half of 250, then half of 500.
    expect(w.sleeps).toEqual([125, 250]);
    expect(result.attempts).toEqual([
      { target: "p/a", outcome: "retryable", status: 503, durationMs: 5, waitMs: 0, reason: "status 503" },
      { target: "p/a", outcome: "retryable", status: 500, durationMs: 5, waitMs: 125, reason: "status 500" },
      { target: "p/a", outcome: "ok", durationMs: 5, waitMs: 250 },
    ]);
    expect(w.calls).toEqual(["1:p/a", "2:p/a", "3:p/a"]);
  });

  it("waits a 429's Retry-After, and retry-after-ms exactly", async () => {
    const w = world({ "p/a": [status(429, { retryAfter: "2" }), status(429, { retryAfter: "1", retryAfterMs: 700 }), "ok"] });
    const result = await w.go([retrying("p/a")]);
    expect(w.sleeps).toEqual([2000, 700]);
    expect(result.attempts.map((r) => r.waitMs)).toEqual([0, 2000, 700]);
  });

  it("goes to the next target at once when Retry-After is past max_retry_after", async () => {
    const w = world({ "p/a": [status(429, { retryAfter: "60" })], "p/b": ["from b"] });
    const result = await w.go([retrying("p/a"), retrying("p/b")]);
    expect(result.value).toBe("from b");
    expect(w.sleeps).toEqual([]);
    expect(w.calls).toEqual(["1:p/a", "2:p/b"]);
  });

  it("tries each fallback with its own retries once the first target's are spent", async () => {
    const w = world({ "p/a": [status(502), status(502)], "p/b": [status(503), "from b"] });
    const result = await w.go([retrying("p/a", 1), retrying("p/b", 1)]);
    expect(result.value).toBe("from b");
    expect(result.target.entry.name).toBe("p/b");
    expect(w.calls).toEqual(["1:p/a", "2:p/a", "3:p/b", "4:p/b"]);
  });

  it("a timeout goes to the next target, never the same one", async () => {
    const w = world({ "p/a": [upstreamTimeout("p", 30_000)], "p/b": ["from b"] });
    const result = await w.go([retrying("p/a", 3), retrying("p/b")]);
    expect(result.value).toBe("from b");
    expect(result.attempts[0]).toMatchObject({ target: "p/a", outcome: "timeout" });
    expect(w.calls).toEqual(["1:p/a", "2:p/b"]);
  });

  it("context_length_exceeded goes to the next target, never the same one", async () => {
    const w = world({ "p/a": [status(400, { code: "context_length_exceeded" })], "p/b": ["long context"] });
    const result = await w.go([retrying("p/a"), retrying("p/b")]);
    expect(result.value).toBe("long context");
    expect(result.attempts[0]).toMatchObject({ outcome: "next", status: 400, reason: "context_length_exceeded" });
    expect(w.calls).toEqual(["1:p/a", "2:p/b"]);
  });

  it("returns a content-policy refusal as it is, without trying anything else", async () => {
    const refusal = status(400, { code: "content_policy_violation" });
    const w = world({ "p/a": [refusal], "p/b": ["never"] });
    const error = await failure(w.go([retrying("p/a"), retrying("p/b")]));
    expect(error).toBe(refusal);
    expect(attemptsOf(error)).toEqual([{ target: "p/a", outcome: "final", status: 400, durationMs: 5, waitMs: 0, reason: "content policy" }]);
    expect(w.calls).toEqual(["1:p/a"]);
  });

  it("an error of ours (a bug) is final too", async () => {
    const bug = new TypeError("x is undefined");
    const w = world({ "p/a": [bug], "p/b": ["never"] });
    expect(await failure(w.go([retrying("p/a"), retrying("p/b")]))).toBe(bug);
    expect(w.calls).toEqual(["1:p/a"]);
  });

  it("when every target failed: the last attempt's error, not a skipped target's", async () => {
    const last = status(503);
    const w = world({ "p/a": [status(502), status(502)], "p/b": [upstreamTimeout("p", 1000)], "p/c": [last] });
    const noVision = invalidRequest("Model 'p/d' does not support vision", { code: "unsupported_feature", param: "messages" });
    w.opts.skip = (target) => (target.entry.name === "p/d" ? noVision : undefined);
    const error = await failure(w.go([retrying("p/a", 1), retrying("p/b"), retrying("p/c", 0), retrying("p/d")]));
    expect(error).toBe(last);
    expect(attemptsOf(error)?.map((r) => `${r.target} ${r.outcome}`)).toEqual(["p/a retryable", "p/a retryable", "p/b timeout", "p/c retryable", "p/d skipped"]);
    expect(attemptsOf(error)?.at(-1)?.reason).toBe("unsupported_feature");
  });

  it("when no target can serve the request: the first target's own reason", async () => {
    const w = world({});
    const first = invalidRequest("Model 'p/a' does not support tools", { code: "unsupported_feature", param: "tools" });
    const second = rateLimited("provider limit full", 3);
    w.opts.skip = (target) => (target.entry.name === "p/a" ? first : second);
    const error = await failure(w.go([retrying("p/a"), retrying("p/b")]));
    expect(error).toBe(first);
    expect(attemptsOf(error)).toEqual([
      { target: "p/a", outcome: "skipped", durationMs: 0, waitMs: 0, reason: "unsupported_feature" },
      { target: "p/b", outcome: "skipped", durationMs: 0, waitMs: 0, reason: "rate_limit_exceeded" },
    ]);
    expect(w.calls).toEqual([]);
  });

  it("skips a target whose capabilities cannot serve the request, and serves from the next", async () => {
    const w = world({ "p/b": ["from b"] });
    w.opts.skip = (target) => (target.entry.name === "p/a" ? invalidRequest("no vision", { code: "unsupported_feature" }) : undefined);
    const result = await w.go([retrying("p/a"), retrying("p/b")]);
    expect(result.attempts.map((r) => r.outcome)).toEqual(["skipped", "ok"]);
  });

  it("stops at once when the client leaves during a wait: no further attempt", async () => {
    const w = world({ "p/a": [status(503), "never"], "p/b": ["never"] });
    let waiting: () => void = () => {};
    w.opts.sleep = (_ms, abort) =>
      new Promise<void>((resolve) => {
        abort.addAbortListener({ onAbort: resolve });
        waiting();
      });
    const done = failure(w.go([retrying("p/a"), retrying("p/b")]));
    await new Promise<void>((resolve) => (waiting = resolve));
    w.abort.abort();
    const error = await done;
    expect(error).toMatchObject({ name: "AbortError" });
    expect(attemptsOf(error)?.map((r) => r.outcome)).toEqual(["retryable"]);
    expect(w.calls).toEqual(["1:p/a"]);
  });

  it("the default sleep ends at once when the client leaves", async () => {
    const w = world({ "p/a": [status(429, { retryAfter: "25" }), "never"] });
    delete w.opts.sleep;
    const done = failure(w.go([retrying("p/a")]));
    // The loop waits on a 25 s timer by now; leaving must end it without the timer.
    setImmediate(() => w.abort.abort());
    expect(await done).toMatchObject({ name: "AbortError" });
    expect(w.calls).toEqual(["1:p/a"]);
  });

  it("an attempt the client's abort ended is thrown as it is, and nothing else is tried", async () => {
    const aborted = Object.assign(new Error("The client closed the connection."), { name: "AbortError" });
    const w = world({ "p/a": [aborted], "p/b": ["never"] });
    const error = await failure(w.go([retrying("p/a"), retrying("p/b")]));
    expect(error).toBe(aborted);
    expect(attemptsOf(error)).toEqual([{ target: "p/a", outcome: "final", durationMs: 5, waitMs: 0, reason: "client left" }]);
  });

  it("a client gone before the first attempt: nothing is tried", async () => {
    const w = world({ "p/a": ["never"] });
    w.abort.abort();
    expect(await failure(w.go([retrying("p/a")]))).toMatchObject({ name: "AbortError" });
    expect(w.calls).toEqual([]);
  });
});

describe("runAttempts and the circuit breakers", () => {
  const fragile = (name: string) => fakeTarget(name, { retry: { attempts: 2 }, breaker: { failures: 2, cooldownMs: 10_000 } });

  it("stops retrying a target once its circuit opens, and skips it in later requests", async () => {
    const a = fragile("p/a");
    const b = fragile("p/b");
    const w = world({ "p/a": [status(503), status(503)], "p/b": ["from b", "again b"] });
    expect((await w.go([a, b])).value).toBe("from b");
    expect(w.calls).toEqual(["1:p/a", "2:p/a", "3:p/b"]);
    const next = await runAttempts([a, b], w.run, w.opts);
    expect(next.value).toBe("again b");
    expect(next.attempts[0]).toEqual({ target: "p/a", outcome: "skipped", durationMs: 0, waitMs: 0, reason: "circuit open" });
  });

  it("when every circuit is open, tries the one whose cooldown ends first", async () => {
    const a = fragile("p/a");
    const b = fragile("p/b");
    const w = world({ "p/a": ["never"], "p/b": ["b probed"] });
    // b opens first, so its cooldown ends first; both are still open when the request comes.
    w.breakers.failure(b);
    w.breakers.failure(b);
    w.clock.now = 1000;
    w.breakers.failure(a);
    w.breakers.failure(a);
    w.clock.now = 2000;
    const result = await w.go([a, b]);
    expect(result.value).toBe("b probed");
    expect(result.attempts.map((r) => `${r.target} ${r.outcome}`)).toEqual(["p/a skipped", "p/b skipped", "p/b ok"]);
    expect(w.breakers.state(b)).toBe("closed");
    expect(w.breakers.state(a)).toBe("open");
  });

  it("the soonest target, tried when every circuit is open, fails: its error, and no retry", async () => {
    const a = fragile("p/a");
    const w = world({ "p/a": [status(503), "never"] });
    w.breakers.failure(a);
    w.breakers.failure(a);
    const error = await failure(w.go([a]));
    expect(error).toMatchObject({ status: 502, upstream: { status: 503 } });
    expect(w.calls).toEqual(["1:p/a"]);
    expect(attemptsOf(error)?.map((r) => r.outcome)).toEqual(["skipped", "retryable"]);
  });

  it("a half-open circuit lets one probe through, and its failure sends the request on", async () => {
    const a = fragile("p/a");
    const b = fragile("p/b");
    const clock = { now: 0 };
    const breakers = new CircuitBreakers(() => clock.now);
    breakers.failure(a);
    breakers.failure(a);
    clock.now = 10_000;
    const w = world({ "p/a": [status(503), "never"], "p/b": ["from b"] }, { breakers });
    const result = await w.go([a, b]);
    // The probe failed: no retry on the circuit it opened again.
    expect(w.calls).toEqual(["1:p/a", "2:p/b"]);
    expect(result.value).toBe("from b");
    expect(breakers.state(a)).toBe("open");
  });

  it("a 400 from a probed target closes its circuit: the target is up", async () => {
    const a = fragile("p/a");
    const clock = { now: 0 };
    const breakers = new CircuitBreakers(() => clock.now);
    breakers.failure(a);
    breakers.failure(a);
    clock.now = 10_000;
    const w = world({ "p/a": [status(400, { code: "invalid_value" })] }, { breakers });
    await failure(w.go([a]));
    expect(breakers.state(a)).toBe("closed");
  });

  it("gives the error records an identity only for what runAttempts threw", () => {
    expect(attemptsOf(new ModelmuxError("x", { status: 400, type: "invalid_request_error", code: null }))).toBeUndefined();
    expect(attemptsOf("text")).toBeUndefined();
  });
});
