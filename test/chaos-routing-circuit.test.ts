/**
 * Circuit breakers over time (README, "Routing and resilience"): a target that keeps failing has
 * its circuit opened after `circuit_breaker.failures` retryable failures and gets no request while
 * it is open (the fallback serves); after `cooldown` one probe goes through, and once the target
 * has recovered the probe's success sends traffic back to it. When every circuit is open, the one
 * whose cooldown ends first is tried, and its error is the answer: never a hang. Chaos upstreams
 * and the router on real ports, the official openai SDK as the client (`helpers/chaos-router.ts`).
 */
import { describe, expect, it } from "vitest";
import type { ModelmuxConfig } from "@modelmux/core";
import { CHAOS_ERRORS } from "./helpers/chaos-upstream.ts";
import { BACKUP, chat, expectHealthy, failure, PRIMARY, routed, useChaosRouter } from "./helpers/chaos-router.ts";
import { sleep } from "./helpers/wait.ts";

const rig = useChaosRouter();
const WHOLE = "t0 t1 t2 t3 t4 t5 t6 t7";
const COOLDOWN_MS = 1_000;
const OUTAGE_MS = 2_500;

/** Two failures open a circuit for a second. */
const quickBreaker = (config: ModelmuxConfig) => void (config.routing!.circuit_breaker = { failures: 2, cooldown: "1s" });

describe("a primary down for a while, then back", () => {
  it("the fallback serves during the outage, the open circuit keeps requests off the primary, and traffic returns after it recovers", async () => {
    const h = await rig.start(quickBreaker);
    rig.primary.script({ downFor: OUTAGE_MS });
    const served: Array<{ at: number; model: string | null; attempts: string | null }> = [];
    const started = performance.now();
    let backOnPrimary = 0;
    // One request every 100 ms until five in a row were the primary's after the outage.
    while (backOnPrimary < 5 && performance.now() - started < 10_000) {
      const { completion, headers } = await chat(h);
      expect(completion.choices[0]!.message.content).toBe(WHOLE);
      served.push({ at: performance.now(), ...routed(headers) });
      backOnPrimary = served.some((s) => s.model === BACKUP) && routed(headers).model === PRIMARY ? backOnPrimary + 1 : 0;
      await sleep(100);
    }
    const outageStart = rig.primary.attempts[0]!.at;
    const outageEnd = outageStart + OUTAGE_MS;

    // Every request was answered; the first ones by the backup, the last ones by the primary.
    expect(served[0]!.model).toBe(BACKUP);
    expect(served.slice(-5).map((s) => s.model)).toEqual(Array(5).fill(PRIMARY));

    // The primary: two failures (the first request and its retry), then the circuit is open: the
    // next attempts are probes, a cooldown apart, until one succeeds.
    const failed = rig.primary.attempts.filter((a) => a.status === 503);
    expect(failed.length).toBeGreaterThanOrEqual(2);
    // Two failures and about one probe per cooldown of the outage, not one per request.
    expect(failed.length).toBeLessThanOrEqual(2 + Math.ceil(OUTAGE_MS / COOLDOWN_MS) + 1);
    for (let i = 2; i < failed.length; i++) expect(failed[i]!.at - failed[i - 1]!.at).toBeGreaterThanOrEqual(COOLDOWN_MS * 0.9);
    const firstOk = rig.primary.attempts.find((a) => a.status === 200)!;
    expect(firstOk.at - failed.at(-1)!.at).toBeGreaterThanOrEqual(COOLDOWN_MS * 0.9);

    // While the circuit was open the backup served alone, one call each (the skip is not counted).
    const duringOpen = served.filter((s) => s.at > failed[1]!.at && s.at < firstOk.at && s.model === BACKUP);
    expect(duringOpen.length).toBeGreaterThan(3);
    expect(duringOpen.filter((s) => s.attempts === "1").length).toBeGreaterThan(2);

    // Back on the primary within a few seconds of its recovery (the cooldown, then the probe).
    expect(firstOk.at - outageEnd).toBeLessThan(COOLDOWN_MS + 2_000);
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});

describe("every circuit open", () => {
  it("the target whose cooldown ends first is tried; its error is the answer, at once", async () => {
    const h = await rig.start((config) => {
      quickBreaker(config);
      config.routing!.circuit_breaker!.cooldown = "5s";
    });
    rig.primary.setDefault({ ...CHAOS_ERRORS.unavailable, message: "Primary down." });
    rig.backup.setDefault({ ...CHAOS_ERRORS.unavailable, message: "Backup down." });
    // Opens both circuits: the primary's first, then the backup's.
    expect((await failure(chat(h))).status).toBe(502);
    expect(rig.primary.attempts).toHaveLength(2);
    expect(rig.backup.attempts).toHaveLength(2);

    const started = performance.now();
    const error = await failure(chat(h));
    expect(error.status).toBe(502);
    expect(error.error).toMatchObject({ code: "upstream_error" });
    // The primary's cooldown ends first: it is tried (once: its circuit stays open), and its
    // error is the one given, not one about a circuit.
    expect(error.message).toContain("Primary down.");
    expect(rig.primary.attempts).toHaveLength(3);
    expect(rig.backup.attempts).toHaveLength(2);
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it("a circuit that opened on one request stays open for the next: the fallback answers with one call", async () => {
    const h = await rig.start(quickBreaker);
    rig.primary.script(CHAOS_ERRORS.unavailable, CHAOS_ERRORS.unavailable);
    const first = await chat(h);
    expect(routed(first.headers)).toEqual({ model: BACKUP, attempts: "3" });
    const second = await chat(h);
    expect(routed(second.headers)).toEqual({ model: BACKUP, attempts: "1" });
    expect(rig.primary.attempts).toHaveLength(2);
    // After the cooldown the probe finds the primary well: it is served again.
    await sleep(COOLDOWN_MS + 100);
    await expectHealthy(h);
    expect(rig.primary.attempts).toHaveLength(3);
  });
});
