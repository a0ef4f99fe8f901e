/**
 * Micro-benchmark of the status page's per-request cost: the `activity` middleware's end listener
 * (`recordActivity`) counting a finished request in the activity window, its cost worked out at a
 * price (not memoised: the access log usually pays that first). Requests spread over 8 apps,
 * 4 models and a few error codes. Prints the CPU time per request: the median and the least of its
 * rounds (on a shared machine the least is the steadier figure):
 *   npx tsx --conditions=modelmux-source bench/micro/activity-record.ts [requests] [rounds]
 */
import { ActivityWindow } from "../../core/src/operations/activity.ts";
import { createPricing } from "../../core/src/operations/pricing.ts";
import type { Exchange } from "../../core/src/server/exchange.ts";
import { recordActivity } from "../../core/src/server/middleware/activity.ts";

const REQUESTS = Number(process.argv[2] ?? 200_000);
const ROUNDS = Number(process.argv[3] ?? 15);
const MODELS = ["openai/gpt-4o", "openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5", "echo/echo-1"];
const pricing = createPricing(Object.fromEntries(MODELS.map((model) => [model, { input: 2.5, cached_input: 1.25, output: 10 }])));

/** Finished requests as the listener sees them: only the fields it reads. */
const exchanges = Array.from({ length: 64 }, (_, i) => {
  const failed = i % 16 === 0;
  return {
    path: "/v1/chat/completions",
    principal: { app: `app-${i % 8}`, developer: "dev", admin: false, scheme: "api_key" },
    model: MODELS[i % MODELS.length],
    usage: failed ? undefined : { prompt_tokens: 100 + i, completion_tokens: 20 + i, total_tokens: 120 + 2 * i },
    failure: failed ? { code: i % 32 === 0 ? "upstream_error" : "rate_limit_exceeded", type: "api_error" } : undefined,
    attempts: [{ target: MODELS[i % MODELS.length], outcome: failed ? "retryable" : "ok", durationMs: 100, waitMs: 0 }],
    startedAt: performance.now(),
    cost: undefined as number | null | undefined,
  } as unknown as Exchange;
});

function round(window: ActivityWindow): number {
  const start = process.cpuUsage();
  for (let i = 0; i < REQUESTS; i++) {
    const x = exchanges[i & 63]!;
    x.cost = undefined;
    recordActivity(window, x, x.failure ? 502 : 200, pricing);
  }
  const used = process.cpuUsage(start);
  return ((used.user + used.system) / REQUESTS) * 1000; // ns per request
}

const window = new ActivityWindow();
round(window); // warm-up
const rounds = Array.from({ length: ROUNDS }, () => round(window)).sort((a, b) => a - b);
const median = rounds[Math.floor(rounds.length / 2)]!;
console.log(`activity window: ${REQUESTS} requests × ${ROUNDS} rounds; per request: median ${(median / 1000).toFixed(3)} µs, least ${(rounds[0]! / 1000).toFixed(3)} µs CPU`);
