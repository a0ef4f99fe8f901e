/**
 * Rate limits (the targets of the README, "Rate limits") on `@modelmux/ratelimit-memory` and
 * `@modelmux/ratelimit-redis` (Redis at REDIS_URL, default redis://127.0.0.1:6379, under a key
 * prefix of its own, removed after; skipped with a message when Redis does not answer).
 * `BENCH_LIMITERS=redis` runs one. For each limiter:
 *
 * 1. A decision alone: `RateLimiter.acquire` with a request's three rules (app with a token limit,
 *    developer, provider) and a token reservation, DECISIONS sequential calls after 1,000 warm-ups,
 *    each followed by its `settle`, as a request does; the apps and developers cycle through 1,000
 *    names, so counters are many and none fills. Reports acquire and settle p50/p99.
 * 2. What a limit adds to a request: a real router (`createRouter` + `startServer` on 127.0.0.1:0,
 *    the echo provider) with and without `rate_limit` (same three limits, never reached), one
 *    keep-alive undici connection each; sequential POST /v1/chat/completions, 20 rounds of 100 on
 *    each router, alternating which goes first (after 200 warm-ups each).
 *    Target: p50(limited) − p50(unlimited) < 0.2 ms in memory, < 1 ms with Redis.
 */
import { randomBytes } from "node:crypto";
import { Agent, request } from "undici";
import { createLogger, createRouter, startServer, type ModelmuxConfig, type RateLimiter, type RateLimitRule } from "@modelmux/core";
import { createMemoryLimiter } from "@modelmux/ratelimit-memory";
import { createRedisLimiter } from "@modelmux/ratelimit-redis";
import { deletePrefix, probeRedis, REDIS_URL } from "../plugins/storage-unstorage/test/redis-gate.ts";
import { ms, summarize, time, verdict, type Row, type Scenario, type Summary } from "./lib.ts";

const DECISIONS = Number(process.env.BENCH_DECISIONS ?? 20_000);
const WARMUP = 1_000;
const NAMES = 1_000;
const HTTP_WARMUP = 200;
const ROUNDS = 20;
const PER_ROUND = 100;
const TARGET_MS = { memory: 0.2, redis: 1 };
const KEY = "sk-bench-ratelimit-0123456789";
const HIGH = 1_000_000_000;

type Limiter = keyof typeof TARGET_MS;
const LIMITERS = (process.env.BENCH_LIMITERS ?? "memory,redis").split(",").filter((name): name is Limiter => Object.hasOwn(TARGET_MS, name));
const logger = createLogger({ level: "warn" });

/** The rules of request i, as the core builds them: app (with tokens), developer, provider. */
function rulesOf(i: number): RateLimitRule[] {
  return [
    { key: `app:bench-app-${i % NAMES}`, requests: HIGH, tokens: HIGH, windowMs: 60_000 },
    { key: `developer:bench-dev-${(i * 7) % NAMES}`, requests: HIGH, windowMs: 60_000 },
    { key: "provider:echo", requests: HIGH, windowMs: 60_000 },
  ];
}

async function decisions(limiter: RateLimiter): Promise<{ acquire: Summary; settle: Summary }> {
  const run = randomBytes(4).toString("hex");
  const one = async (i: number, samples?: { acquire: number[]; settle: number[] }) => {
    const id = `${run}.${i}`;
    const rules = rulesOf(i);
    let allowed = false;
    const acquireMs = await time(async () => void (allowed = (await limiter.acquire({ id, rules, reservedTokens: 256 })).allowed));
    if (!allowed) throw new Error("a decision refused a request that no limit could refuse");
    const settleMs = await time(() => limiter.settle({ id, rules, reservedTokens: 256, usedTokens: 120 }));
    samples?.acquire.push(acquireMs);
    samples?.settle.push(settleMs);
  };
  for (let i = 0; i < WARMUP; i++) await one(i);
  const samples = { acquire: [] as number[], settle: [] as number[] };
  for (let i = 0; i < DECISIONS; i++) await one(WARMUP + i, samples);
  return { acquire: summarize(samples.acquire), settle: summarize(samples.settle) };
}

function routerConfig(rateLimit: ModelmuxConfig["rate_limit"]): ModelmuxConfig {
  return {
    auth: { api_keys: [{ key: KEY, app: "bench-app", developer: "bench-dev" }] },
    providers: { echo: { plugin: "provider-echo", models: ["echo-1"], ...(rateLimit && { rate_limit: { requests: HIGH, window: "60s" } }) } },
    ...(rateLimit && { rate_limit: rateLimit }),
  };
}

/** Sequential POSTs through two routers, one with limits and one without, in alternating rounds. */
async function requestOverhead(rateLimit: NonNullable<ModelmuxConfig["rate_limit"]>): Promise<{ plain: Summary; limited: Summary }> {
  const routers = await Promise.all([routerConfig(undefined), routerConfig(rateLimit)].map((config) => createRouter(config, { logger })));
  const servers = await Promise.all(routers.map((router) => startServer(router, { host: "127.0.0.1", port: 0 })));
  const agents = servers.map(() => new Agent({ connections: 1, keepAliveTimeout: 60_000 }));
  const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
  const body = JSON.stringify({ model: "echo/echo-1", max_completion_tokens: 64, messages: [{ role: "user", content: "What does a model router do with a request?" }] });
  const post = async (which: 0 | 1): Promise<number> => {
    let status = 0;
    const elapsed = await time(async () => {
      const response = await request(`${servers[which]!.url}/v1/chat/completions`, { method: "POST", headers, body, dispatcher: agents[which] });
      status = response.statusCode;
      await response.body.text();
    });
    if (status !== 200) throw new Error(`POST /v1/chat/completions answered ${status}`);
    return elapsed;
  };
  const samples = { plain: [] as number[], limited: [] as number[] };
  try {
    for (let i = 0; i < HTTP_WARMUP * 2; i++) await post((i % 2) as 0 | 1);
    for (let round = 0; round < ROUNDS; round++) {
      for (const which of round % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const)) {
        for (let i = 0; i < PER_ROUND; i++) samples[which ? "limited" : "plain"].push(await post(which));
      }
    }
  } finally {
    await Promise.all(agents.map((agent) => agent.close()));
    await Promise.all(servers.map((server) => server.stop()));
  }
  return { plain: summarize(samples.plain), limited: summarize(samples.limited) };
}

/** Memory decisions take microseconds, which `ms()` rounds to 0.00. */
const micros = (summary: Summary) => `p50 ${(summary.p50 * 1000).toFixed(1)} µs, p99 ${(summary.p99 * 1000).toFixed(1)} µs`;

const limits = { app: { requests: HIGH, tokens: HIGH, window: "60s" }, developer: { requests: HIGH, window: "60s" } };

const scenario: Scenario = {
  description: `rate limits on ${LIMITERS.join(", ")}: a decision's p50/p99, and what a limit adds to a request`,
  async run() {
    const rows: Row[] = [];
    const results: Record<string, unknown> = {};
    for (const name of LIMITERS) {
      const row = (measure: string, cells: Partial<Row>) => rows.push({ limiter: name, measure, p50: "", p99: "", target: "", result: "", note: "", ...(cells as Row) });
      const say = (text: string) => console.log(`${name.padEnd(6)} ${text}`);
      let limiter: RateLimiter;
      let rateLimit: NonNullable<ModelmuxConfig["rate_limit"]>;
      let cleanup = async () => {};
      if (name === "memory") {
        limiter = createMemoryLimiter();
        rateLimit = { plugin: "ratelimit-memory", ...limits };
      } else {
        const problem = await probeRedis();
        if (problem !== undefined) {
          const skip = `Redis is not reachable at ${REDIS_URL} (${problem}); start it as DEVELOPERS.md says, or set REDIS_URL`;
          console.log(`${name.padEnd(6)} skipped: ${skip}`);
          row("skipped", { note: skip });
          results[name] = { skipped: skip };
          continue;
        }
        const prefix = `modelmux-bench-${process.pid}-${Date.now()}`;
        limiter = await createRedisLimiter({ url: REDIS_URL, prefix: `${prefix}:` }, logger);
        rateLimit = { plugin: "ratelimit-redis", options: { url: REDIS_URL, prefix: `${prefix}:router:` }, ...limits };
        cleanup = async () => void (await deletePrefix(prefix));
      }
      try {
        say(`${DECISIONS.toLocaleString("en")} sequential decisions (acquire, then settle)…`);
        const decided = await decisions(limiter);
        row("acquire (3 rules, 1 with tokens)", { p50: ms(decided.acquire.p50), p99: ms(decided.acquire.p99), note: micros(decided.acquire) });
        row("settle", { p50: ms(decided.settle.p50), p99: ms(decided.settle.p99), note: micros(decided.settle) });
        say(`POST /v1/chat/completions with and without limits, ${ROUNDS} rounds of ${PER_ROUND} each…`);
        const http = await requestOverhead(rateLimit);
        const overhead = http.limited.p50 - http.plain.p50;
        row("POST, no limits", { p50: ms(http.plain.p50), p99: ms(http.plain.p99) });
        row("POST, app + developer + provider limits", { p50: ms(http.limited.p50), p99: ms(http.limited.p99) });
        row("a limit decision adds (p50 difference)", { p50: ms(overhead), target: `< ${TARGET_MS[name]} ms`, result: verdict(overhead < TARGET_MS[name]) });
        results[name] = { decisions: decided, http: { ...http, overheadP50: overhead } };
      } finally {
        await limiter.close?.();
        await cleanup();
      }
    }
    logger.flush();
    return { rows, results };
  },
};

export default scenario;
