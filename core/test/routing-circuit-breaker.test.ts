/**
 * The circuit breakers (core/src/routing/circuit-breaker.ts) on an injected clock: closed → open
 * after `failures` consecutive retryable failures, skipped while open, one probe at a time once the
 * cooldown ended (half-open), closed by the probe's success, opened again by its failure, and
 * `soonest` when every circuit is open.
 */
import { describe, expect, it } from "vitest";
import { CircuitBreakers } from "../src/routing/circuit-breaker.ts";
import { fakeTarget as target } from "./fixtures/routing-targets.ts";

const fakeTarget = (name: string, breaker?: { failures: number; cooldownMs: number }) => target(name, { breaker });

function setup() {
  const clock = { now: 1000 };
  return { clock, breakers: new CircuitBreakers(() => clock.now) };
}

describe("CircuitBreakers", () => {
  it("opens after `failures` consecutive failures, and a success in between starts the count again", () => {
    const { breakers } = setup();
    const a = fakeTarget("p/a");
    breakers.failure(a);
    breakers.failure(a);
    breakers.success(a);
    breakers.failure(a);
    breakers.failure(a);
    expect(breakers.state(a)).toBe("closed");
    expect(breakers.admit(a)).toBe(true);
    breakers.failure(a);
    expect(breakers.state(a)).toBe("open");
    expect(breakers.admit(a)).toBe(false);
  });

  it("lists the state of each target that failed lately (states), closed ones included until they succeed", () => {
    const { clock, breakers } = setup();
    const a = fakeTarget("p/a", { failures: 1, cooldownMs: 10 });
    const b = fakeTarget("p/b", { failures: 2, cooldownMs: 10 });
    expect(breakers.states()).toEqual(new Map());
    breakers.failure(a);
    breakers.failure(b);
    expect(breakers.states()).toEqual(new Map([["p/a", "open"], ["p/b", "closed"]]));
    clock.now += 10;
    expect(breakers.states()).toEqual(new Map([["p/a", "half-open"], ["p/b", "closed"]]));
    breakers.success(a);
    breakers.success(b);
    expect(breakers.states()).toEqual(new Map());
  });

  it("keeps one circuit per target name", () => {
    const { breakers } = setup();
    const a = fakeTarget("p/a", { failures: 1, cooldownMs: 10 });
    breakers.failure(a);
    expect(breakers.admit(fakeTarget("p/b"))).toBe(true);
    expect(breakers.admit(fakeTarget("p/a"))).toBe(false);
  });

  it("admits one probe after the cooldown; others are skipped while it runs; its success closes the circuit", () => {
    const { clock, breakers } = setup();
    const a = fakeTarget("p/a", { failures: 1, cooldownMs: 10_000 });
    breakers.failure(a);
    clock.now += 9_999;
    expect(breakers.admit(a)).toBe(false);
    clock.now += 1;
    expect(breakers.state(a)).toBe("half-open");
    expect(breakers.admit(a)).toBe(true);
    expect(breakers.admit(a)).toBe(false);
    expect(breakers.admit(a)).toBe(false);
    breakers.success(a);
    expect(breakers.state(a)).toBe("closed");
    expect(breakers.admit(a)).toBe(true);
    expect(breakers.admit(a)).toBe(true);
  });

  it("opens again for another cooldown when the probe fails", () => {
    const { clock, breakers } = setup();
    const a = fakeTarget("p/a", { failures: 2, cooldownMs: 5_000 });
    breakers.failure(a);
    breakers.failure(a);
    clock.now += 5_000;
    expect(breakers.admit(a)).toBe(true);
    clock.now += 300;
    breakers.failure(a);
    expect(breakers.state(a)).toBe("open");
    clock.now += 4_999;
    expect(breakers.admit(a)).toBe(false);
    clock.now += 1;
    expect(breakers.admit(a)).toBe(true);
  });

  it("frees the probe slot when the probe ended saying nothing of the target", () => {
    const { clock, breakers } = setup();
    const a = fakeTarget("p/a", { failures: 1, cooldownMs: 100 });
    breakers.failure(a);
    clock.now += 100;
    expect(breakers.admit(a)).toBe(true);
    breakers.release(a);
    expect(breakers.state(a)).toBe("half-open");
    expect(breakers.admit(a)).toBe(true);
  });

  it("never opens with failures: 0", () => {
    const { breakers } = setup();
    const a = fakeTarget("p/a", { failures: 0, cooldownMs: 100 });
    for (let i = 0; i < 10; i++) breakers.failure(a);
    expect(breakers.admit(a)).toBe(true);
  });

  it("soonest: the open circuit whose cooldown ends first", () => {
    const { clock, breakers } = setup();
    const a = fakeTarget("p/a", { failures: 1, cooldownMs: 10_000 });
    const b = fakeTarget("p/b", { failures: 1, cooldownMs: 10_000 });
    const c = fakeTarget("p/c", { failures: 1, cooldownMs: 1_000 });
    breakers.failure(a);
    clock.now += 100;
    breakers.failure(b);
    breakers.failure(c);
    expect(breakers.soonest([a, b, c])).toBe(c);
    expect(breakers.soonest([b, a])).toBe(a);
    expect(breakers.soonest([])).toBeUndefined();
    // A forced attempt holds the probe slot like a probe.
    breakers.force(a);
    clock.now += 20_000;
    expect(breakers.admit(a)).toBe(false);
    breakers.failure(a);
    expect(breakers.state(a)).toBe("open");
  });
  it("reads a circuit without changing it: closed with its failures, open with the ms to its probe, then half-open", () => {
    const { clock, breakers } = setup();
    const a = fakeTarget("p/a", { failures: 2, cooldownMs: 5_000 });
    expect(breakers.inspect("p/a")).toEqual({ state: "closed", failures: 0 });
    breakers.failure(a);
    expect(breakers.inspect("p/a")).toEqual({ state: "closed", failures: 1 });
    breakers.failure(a);
    clock.now += 1_500;
    expect(breakers.inspect("p/a")).toEqual({ state: "open", failures: 2, probeInMs: 3_500 });
    clock.now += 3_500;
    expect(breakers.inspect("p/a")).toEqual({ state: "half-open", failures: 2, probeInMs: 0 });
    // Reading took no probe slot.
    expect(breakers.admit(a)).toBe(true);
    breakers.success(a);
    expect(breakers.inspect("p/a")).toEqual({ state: "closed", failures: 0 });
  });
});
