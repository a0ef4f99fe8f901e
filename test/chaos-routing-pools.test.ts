/**
 * Weighted pools (README, "Routing and resilience"): a `loadbalance` alias picks one member per
 * request in proportion to its weight, and the other members are its fallbacks, so a failing
 * member's requests are answered by another. Chaos upstreams and the router on real ports, the
 * official openai SDK as the client (`helpers/chaos-router.ts`). Images and `/v1/responses`:
 * `chaos-routing-images-responses.test.ts`.
 */
import { describe, expect, it } from "vitest";
import type { ModelmuxConfig } from "@modelmux/core";
import { CHAOS_ERRORS } from "./helpers/chaos-upstream.ts";
import { BACKUP, chat, PRIMARY, routed, streamChat, useChaosRouter } from "./helpers/chaos-router.ts";

const rig = useChaosRouter();
const WHOLE = "t0 t1 t2 t3 t4 t5 t6 t7";

/** `smart`: the primary 3 parts in 4, the backup 1 in 4; no `fallbacks` of their own. */
const pool = (config: ModelmuxConfig) => {
  config.aliases = { smart: { loadbalance: [{ model: PRIMARY, weight: 3 }, { model: BACKUP, weight: 1 }] } };
  delete config.fallbacks;
};

describe("a loadbalance pool", () => {
  it("honours the weights, roughly, over 40 requests", async () => {
    const h = await rig.start(pool);
    const models: Array<string | null> = [];
    for (let i = 0; i < 40; i++) {
      const { completion, headers } = await chat(h, "smart");
      expect(completion.choices[0]!.message.content).toBe(WHOLE);
      expect(routed(headers).attempts).toBe("1");
      models.push(routed(headers).model);
    }
    const onPrimary = models.filter((m) => m === PRIMARY).length;
    expect(models.filter((m) => m !== PRIMARY && m !== BACKUP)).toEqual([]);
    // 30 expected; loose bounds (each is well over 3 standard deviations away).
    expect(onPrimary).toBeGreaterThanOrEqual(20);
    expect(onPrimary).toBeLessThanOrEqual(38);
    expect(rig.primary.attempts).toHaveLength(onPrimary);
    expect(rig.backup.attempts).toHaveLength(40 - onPrimary);
  });

  it("a failing member: every request is answered by the other, whichever was picked", async () => {
    const h = await rig.start(pool);
    rig.backup.setDefault(CHAOS_ERRORS.unavailable);
    for (let i = 0; i < 12; i++) {
      const { completion, headers } = await chat(h, "smart");
      expect(completion.choices[0]!.message.content).toBe(WHOLE);
      expect(completion.id).toMatch(/^chatcmpl-primary-/);
      expect(routed(headers).model).toBe(PRIMARY);
    }
    // The backup saw only the requests that picked it (its tries, until its circuit opened).
    expect(rig.primary.attempts.every((a) => a.status === 200)).toBe(true);
    expect(rig.primary.attempts).toHaveLength(12);
    // A streamed request goes the same way.
    const read = await streamChat(h, "smart");
    expect(read).toMatchObject({ status: 200, text: WHOLE, finishes: ["stop"], errors: [], done: true });
    expect(routed(read.headers).model).toBe(PRIMARY);
  });

  it("a member that hangs: the other answers after the provider's timeout, and the pool stays usable", async () => {
    const h = await rig.start((config) => {
      pool(config);
      config.providers.primary!.timeout = "1s";
      // Every request picks the primary first.
      config.aliases = { smart: { loadbalance: [{ model: PRIMARY, weight: 1_000_000 }, { model: BACKUP, weight: 0.000001 }] } };
    });
    rig.primary.script("hang");
    const started = performance.now();
    const { completion, headers } = await chat(h, "smart");
    expect(completion.choices[0]!.message.content).toBe(WHOLE);
    expect(routed(headers)).toEqual({ model: BACKUP, attempts: "2" });
    expect(rig.primary.attempts).toHaveLength(1);
    expect(performance.now() - started).toBeLessThan(6_000);
    const again = await chat(h, "smart");
    expect(routed(again.headers)).toEqual({ model: PRIMARY, attempts: "1" });
  });
});
