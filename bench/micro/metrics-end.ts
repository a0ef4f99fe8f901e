/**
 * Micro-benchmark of the metrics' work per request (README, "Metrics"): the `metrics` middleware's
 * start (`requestStarted`) and its end listener (`requestEnded`, `core/src/operations/metrics-request.ts`)
 * on exchanges as the router leaves them, in process, without HTTP: a priced JSON chat completion,
 * a stream, a 404. Prints the CPU time per request: the median and the least of its rounds (on a
 * shared machine the least is the steadier figure), and the size of one scrape:
 *   npx tsx --conditions=modelmux-source bench/micro/metrics-end.ts [requests] [rounds]
 */
import { RouterMetrics } from "../../core/src/operations/metrics.ts";
import { createPricing } from "../../core/src/operations/pricing.ts";
import { CircuitBreakers } from "../../core/src/routing/circuit-breaker.ts";
import type { ModelEntry } from "../../core/src/models/model-table.ts";
import type { Exchange } from "../../core/src/server/exchange.ts";
import { modelNotFound } from "../../core/src/errors.ts";

const REQUESTS = Number(process.argv[2] ?? 200_000);
const ROUNDS = Number(process.argv[3] ?? 15);

const entries = ["openai/gpt-4o", "openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5"].map((name) => {
  const [provider, model] = name.split("/") as [string, string];
  return { name, provider, model } as ModelEntry;
});
const metrics = new RouterMetrics({
  models: { entries },
  breakers: new CircuitBreakers(),
  pricing: createPricing({ "openai/gpt-4o": { input: 2.5, output: 10 } }),
  keys: [{ app: "web", developer: "alice" }],
});

const principal = { app: "web", developer: "alice", scheme: "api_key" as const, admin: false };
const usage = { prompt_tokens: 120, completion_tokens: 80, total_tokens: 200 };

/** What the router has put on an exchange by its end; only the fields the metrics read. */
function exchange(fields: Partial<Exchange>): Exchange {
  return { method: "POST", route: "/v1/chat/completions", startedAt: performance.now(), streaming: false, principal, ...fields } as Exchange;
}

const KINDS = {
  json: exchange({ model: "openai/gpt-4o", usage, attempts: [{ target: "openai/gpt-4o", outcome: "ok", durationMs: 420, waitMs: 0 }] }),
  stream: exchange({ model: "anthropic/claude-sonnet-4-5", stream: true, streaming: true, repliedAt: performance.now(), usage, attempts: [{ target: "anthropic/claude-sonnet-4-5", outcome: "ok", durationMs: 300, waitMs: 0 }] }),
  notFound: exchange({ failure: modelNotFound("nobody/nothing") }),
};

function round(x: Exchange, status: number, requests: number): number {
  const start = process.cpuUsage();
  for (let i = 0; i < requests; i++) {
    // `x.cost` is worked out once per request: forget the last one's.
    x.cost = undefined;
    metrics.requestStarted();
    if (x.streaming) metrics.streamStarted(x);
    metrics.requestEnded(x, status, undefined);
  }
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / requests;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

for (const [name, x] of Object.entries(KINDS)) {
  const status = name === "notFound" ? 404 : 200;
  round(x, status, Math.min(REQUESTS, 20_000)); // warm-up
  const times: number[] = [];
  for (let r = 0; r < ROUNDS; r++) times.push(round(x, status, REQUESTS));
  console.log(`${name.padEnd(9)} ${(median(times) / 1000).toFixed(2)} µs/request (median), ${(Math.min(...times) / 1000).toFixed(2)} µs (least)`);
}
const scrapeStart = process.cpuUsage();
const text = await metrics.text();
const scrape = process.cpuUsage(scrapeStart);
console.log(`scrape: ${text.split("\n").length} lines, ${((scrape.user + scrape.system) / 1000).toFixed(1)} ms CPU`);
