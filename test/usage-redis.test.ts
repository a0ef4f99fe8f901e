/**
 * End-to-end: two routers sharing one Redis through `storage-unstorage` count usage together
 * (README, "Usage"). Known traffic through both (the openai SDK; the echo provider and an
 * OpenAI-shaped chaos upstream on 127.0.0.1, both priced; a provider's 404, a 502 and a stream
 * that fails as errors), then a burst of concurrent requests: `GET /v1/usage` on either router,
 * and on a third started afterwards, shows the exact same sums per app, developer and model, per
 * day, per hour and in all. Real servers on 127.0.0.1; Redis at REDIS_URL (skipped with a message
 * when unreachable, failed under CI=true), under a key prefix of this run, removed at the end.
 */
import { randomBytes } from "node:crypto";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ModelmuxConfig } from "@modelmux/core";
import { deletePrefix, REDIS_URL, redisGate } from "../plugins/storage-unstorage/test/redis-gate.ts";
import { startChaosUpstream, type ChaosUpstream } from "./helpers/chaos-upstream.ts";
import { startHarness, testConfig, TEST_KEY, type Harness } from "./helpers/harness.ts";
import { costOf, overTime, readUsage, sortedRows, utcDay, utcHour, type UsageList, type UsageRow } from "./helpers/usage.ts";

const { skip } = await redisGate("usage counters on Redis (end to end)");
const RUN = `modelmux-test:${process.pid}-${randomBytes(3).toString("hex")}-usage`;
afterAll(async () => {
  if (skip === undefined) await deletePrefix(RUN);
});

const ADMIN_KEY = "sk-usage-admin-0123456789";
const OTHER_KEY = "sk-usage-other-0123456789";
const ECHO = "echo/echo-1";
const CHAOS = "chaos/gpt-4o";
const PRICES = { [ECHO]: [2, 8], [CHAOS]: [3, 15] } as const;
/** The concurrent burst: bounded, spread over both routers and both keys. */
const BURST = 60;

type Usage = { prompt_tokens: number; completion_tokens: number };

function config(upstream: ChaosUpstream, prefix: string): ModelmuxConfig {
  return testConfig(
    {
      echo: { plugin: "provider-echo", models: ["echo-1"] },
      chaos: { plugin: "provider-openai", base_url: upstream.openaiBaseUrl, api_key: "sk-chaos", models: ["gpt-4o"] },
    },
    {
      auth: {
        api_keys: [
          { key: TEST_KEY, app: "test-app", developer: "tester" },
          { key: OTHER_KEY, app: "other-app", developer: "dev2" },
          { key: ADMIN_KEY, app: "ops", developer: "root", admin: true },
        ],
      },
      pricing: Object.fromEntries(Object.entries(PRICES).map(([model, [input, output]]) => [model, { input, output }])),
      storage: { plugin: "storage-unstorage", options: { driver: "redis", url: REDIS_URL, prefix } },
      // One scripted failure is one reply.
      routing: { retry: { attempts: 0 } },
    },
  );
}

const client = (h: Harness, key: string) => new OpenAI({ baseURL: h.baseURL, apiKey: key, maxRetries: 0 });
const chat = (model: string, content: string) => ({ model, messages: [{ role: "user" as const, content }] });

/** What the test expects per app, developer and model, added up as requests end. */
class Expected {
  readonly rows = new Map<string, UsageRow>();
  add(app: string, developer: string, model: string, usage: Usage | undefined, error = false): void {
    const key = `${app} ${developer} ${model}`;
    const row = this.rows.get(key) ?? { app, developer, model, requests: 0, errors: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0 };
    this.rows.set(key, row);
    row.requests += 1;
    if (error) row.errors += 1;
    if (usage) {
      const [input, output] = PRICES[model as keyof typeof PRICES];
      row.input_tokens += usage.prompt_tokens;
      row.output_tokens += usage.completion_tokens;
      row.cost_usd = Number((row.cost_usd + costOf(usage, input, output)).toFixed(9));
    }
  }
}

describe.skipIf(skip !== undefined)("usage counters shared through Redis", () => {
  let upstream: ChaosUpstream;
  const routers: Harness[] = [];
  beforeAll(async () => void (upstream = await startChaosUpstream({ name: "chaos" })));
  afterAll(() => upstream?.close());
  afterEach(async () => void (await Promise.all(routers.splice(0).map((r) => r.close()))));

  it("two routers count every request together, exactly, and any router reads the same sums per day, per hour and in all", async () => {
    const prefix = `${RUN}:shared`;
    const [a, b] = await Promise.all([startHarness(config(upstream, prefix), "http"), startHarness(config(upstream, prefix), "http")]);
    routers.push(a, b);
    const [firstDay, firstHour] = [utcDay(), utcHour()];
    const expected = new Expected();
    const as = { app: "test-app", developer: "tester" };
    const other = { app: "other-app", developer: "dev2" };

    // Known traffic, one request at a time, through both routers.
    for (const [h, key, who] of [[a, TEST_KEY, as], [b, TEST_KEY, as], [b, OTHER_KEY, other]] as const) {
      const reply = await client(h, key).chat.completions.create(chat(ECHO, `hello from ${who.app} through a router`));
      expected.add(who.app, who.developer, ECHO, reply.usage);
    }
    const stream = await client(a, OTHER_KEY).chat.completions.create({ ...chat(ECHO, "a streamed reply"), stream: true, stream_options: { include_usage: true } });
    let streamed: Usage | undefined;
    for await (const chunk of stream) streamed = chunk.usage ?? streamed;
    expected.add(other.app, other.developer, ECHO, streamed);
    const fine = await client(a, TEST_KEY).chat.completions.create(chat(CHAOS, "fine"));
    expected.add(as.app, as.developer, CHAOS, fine.usage);

    upstream.script({ status: 404 });
    await expect(client(b, TEST_KEY).chat.completions.create(chat(CHAOS, "a provider's 404"))).rejects.toMatchObject({ status: 404 });
    expected.add(as.app, as.developer, CHAOS, undefined, true);
    upstream.script({ status: 500 });
    await expect(client(a, OTHER_KEY).chat.completions.create(chat(CHAOS, "a provider's 500"))).rejects.toMatchObject({ status: 502 });
    expected.add(other.app, other.developer, CHAOS, undefined, true);
    upstream.script({ errorAfter: 2 });
    const failing = await client(b, TEST_KEY).chat.completions.create({ ...chat(CHAOS, "breaks off"), stream: true });
    await expect(async () => {
      for await (const _ of failing);
    }).rejects.toThrow();
    expected.add(as.app, as.developer, CHAOS, undefined, true);
    // Not counted: a model no router serves.
    await expect(client(a, TEST_KEY).chat.completions.create(chat("nobody/nothing", "x"))).rejects.toMatchObject({ status: 404 });

    // A bounded burst, all at once, over both routers and both keys.
    const burst = await Promise.all(
      Array.from({ length: BURST }, async (_, i) => {
        const who = i % 3 === 0 ? other : as;
        const reply = await client(i % 2 ? a : b, who === other ? OTHER_KEY : TEST_KEY).chat.completions.create(chat(ECHO, `burst ${i}`));
        return [who, reply.usage] as const;
      }),
    );
    for (const [who, usage] of burst) expected.add(who.app, who.developer, ECHO, usage);

    // Each router writes its own pending batch before it reads; once both have, all read alike.
    await readUsage(b, ADMIN_KEY);
    const start = `start=${utcDay(Date.now() - 86_400_000)}`;
    const want = sortedRows([...expected.rows.values()]);
    expect(want.reduce((n, r) => n + r.requests, 0)).toBe(8 + BURST);
    for (const query of [`${start}&group_by=app,developer,model`, `${start}&interval=hour&group_by=app,developer,model`]) {
      const fromA = await readUsage(a, ADMIN_KEY, query);
      const fromB = await readUsage(b, ADMIN_KEY, query);
      expect(fromB).toEqual(fromA);
      const hourly = query.includes("hour");
      expect(overTime(fromA.data, hourly ? firstHour : firstDay, hourly ? utcHour() : utcDay())).toEqual(want);
    }
    const totals = await readUsage(b, ADMIN_KEY, `${start}&interval=total&group_by=model`);
    expect(totals.data.map((r) => [r.model, r.requests, r.errors])).toEqual([
      [CHAOS, 4, 3],
      [ECHO, 4 + BURST, 0],
    ]);

    // A router started later reads them from Redis: none of this was in its memory.
    const c = await startHarness(config(upstream, prefix), "fetch");
    routers.push(c);
    const fromC: UsageList = await readUsage(c, ADMIN_KEY, `${start}&interval=total&group_by=model`);
    expect(fromC).toEqual(totals);
  }, 60_000);

  it("counts the last batch of a router that stops, and a router on another prefix counts apart", async () => {
    const prefix = `${RUN}:stop`;
    const a = await startHarness(config(upstream, prefix), "http");
    const elsewhere = await startHarness(config(upstream, `${RUN}:elsewhere`), "http");
    routers.push(elsewhere);
    await client(a, TEST_KEY).chat.completions.create(chat(ECHO, "just before the stop"));
    await a.close(); // writes its pending batch on the way out
    const b = await startHarness(config(upstream, prefix), "fetch");
    routers.push(b);
    const query = `start=${utcDay(Date.now() - 86_400_000)}&interval=total`;
    expect((await readUsage(b, ADMIN_KEY, query)).data).toMatchObject([{ requests: 1 }]);
    expect((await readUsage(elsewhere, ADMIN_KEY, query)).data).toEqual([]);
  });
});
