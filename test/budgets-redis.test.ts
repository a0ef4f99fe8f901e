/**
 * Budgets shared through Redis, end to end (README, "Budgets"): two routers with `ratelimit-redis`
 * count one app's spending between them, to the nano-dollar, JSON and streamed replies alike. Real
 * servers on 127.0.0.1; Redis is at REDIS_URL (skipped with a message when unreachable, failed
 * under CI=true).
 */
import { randomBytes } from "node:crypto";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { ModelmuxConfig } from "@modelmux/core";
import { deletePrefix, REDIS_URL, redisGate } from "../plugins/storage-unstorage/test/redis-gate.ts";
import { postJson, readSse, startHarness, testConfig, type Harness } from "./helpers/harness.ts";

const { skip } = await redisGate("budgets on Redis (end to end)");
const RUN = `modelmux-test:${process.pid}-${randomBytes(3).toString("hex")}-budget`;
let configs = 0;
afterAll(async () => {
  if (skip === undefined) await deletePrefix(RUN);
});

const CHAT = "/v1/chat/completions";
/** USD per million tokens: $0.0001 a prompt token, $0.001 a completion token. */
const PRICE = { input: 100, output: 1000 };
/** "hello there" on the echo: 3 prompt and 3 completion tokens, $0.0033; it reserves $0.0053 (91 bytes, max_tokens 3). */
const hello = { model: "echo/echo-1", messages: [{ role: "user" as const, content: "hello there" }], max_tokens: 3 };

function budgetConfig(cost: number): ModelmuxConfig {
  return testConfig(
    { echo: { plugin: "provider-echo", models: ["echo-1"] } },
    {
      pricing: { "echo/echo-1": PRICE },
      rate_limit: { plugin: "ratelimit-redis", options: { url: REDIS_URL, prefix: `${RUN}:${++configs}:` }, app: { cost, window: "30d" } },
    },
  );
}

const routers: Harness[] = [];
afterEach(async () => {
  await Promise.all(routers.splice(0).map((r) => r.close()));
});
async function startRouters(config: ModelmuxConfig): Promise<[Harness, Harness]> {
  const started = await Promise.all([startHarness(config, "http"), startHarness(config, "http")]);
  routers.push(...started);
  return started as [Harness, Harness];
}

const remaining = (res: Response) => res.headers.get("x-ratelimit-remaining-cost");

describe.skipIf(skip !== undefined)("budgets shared through Redis", () => {
  it("two routers stop one app at its budget together, their spending added up exactly", async () => {
    const [a, b] = await startRouters(budgetConfig(0.05));
    const statuses: number[] = [];
    // Bounded: the budget admits 14 ($0.0033 each, while $0.0053 more fits in $0.05).
    for (let i = 0; i < 16; i++) {
      const res = await (i % 2 ? b : a).request(CHAT, postJson(hello));
      statuses.push(res.status);
      await res.text();
    }
    expect(statuses).toEqual([...Array<number>(14).fill(200), 429, 429]);
    // 14 × $0.0033 spent, whichever router counted it: $0.0038 left on both, to the unit.
    for (const router of [a, b]) {
      const refused = await router.request(CHAT, postJson(hello));
      expect(refused.status).toBe(429);
      expect(remaining(refused)).toBe("0.0038");
      // The window slides by buckets of 7.2 hours for amounts (README "Budgets"): the reset is
      // somewhere in the last bucket of the 30 days, wherever the wall clock is in its bucket.
      expect((await refused.json()).error.message).toMatch(
        /^The app 'test-app' budget of \$0\.05 per 30d has \$0\.0038 left, less than this request could cost \(\$0\.0053\); resets in (30d|29d (1[7-9]|2[0-3])h), or ask for fewer output tokens\.$/,
      );
    }
    // A request asking for one output token fits ($0.0033) on either router, and then nothing is left.
    const last = await b.request(CHAT, postJson({ ...hello, max_tokens: 1 }));
    expect(last.status).toBe(200);
    expect(remaining(last)).toBe("0.0005");
  });

  it("counts a streamed reply's cost on one router against the budget the other applies", async () => {
    const [a, b] = await startRouters(budgetConfig(1));
    const stream = await a.request(CHAT, postJson({ ...hello, stream: true }));
    expect(stream.status).toBe(200);
    // `"stream":true` makes the body 105 bytes: 27 prompt tokens estimated, $0.0057 reserved.
    expect(remaining(stream)).toBe("0.9943");
    await readSse(stream);
    // Settled with its real cost ($0.0033) once it ended, less the next request's own reservation.
    const next = await b.request(CHAT, postJson(hello));
    expect(remaining(next)).toBe("0.9914");
  });
});
