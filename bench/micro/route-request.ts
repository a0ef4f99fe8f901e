/**
 * Micro-benchmark of what routing adds to a request that needs no retry (README, "Performance"):
 * the same attempt run straight (rate-limit grant, provider call, the provider's promise, as a
 * router without routing does) and through `routeRequest` (plan, breakers, records, headers), in
 * process, without HTTP. Prints the CPU time per request of each and their difference: the median
 * and the least of its rounds.
 *   npx tsx --conditions=modelmux-source bench/micro/route-request.ts [requests] [rounds]
 * Under tsx every closure made at run time also pays esbuild's keepNames helper (about 3× these
 * figures); the router runs its compiled dist/, which has none. For the router's own figures, bundle
 * it first: npx esbuild bench/micro/route-request.ts --bundle --platform=node --format=esm
 *   --conditions=modelmux-source --packages=external --outfile=bench/results/route-request.mjs
 *   && node bench/results/route-request.mjs
 */
import type { AppContext } from "../../core/src/app-context.ts";
import { createPricing } from "../../core/src/operations/pricing.ts";
import { CircuitBreakers } from "../../core/src/routing/circuit-breaker.ts";
import { routeRequest } from "../../core/src/routing/routed-call.ts";
import { acquireRateLimit } from "../../core/src/rate-limit/acquire.ts";
import { providerCall } from "../../core/src/upstream/provider-call.ts";
import { RequestAbort } from "../../core/src/server/request-abort.ts";
import type { Exchange } from "../../core/src/server/exchange.ts";
import type { Target } from "../../core/src/routing/types.ts";
import type { ModelEntry } from "../../core/src/models/model-table.ts";

const REQUESTS = Number(process.argv[2] ?? 200_000);
const ROUNDS = Number(process.argv[3] ?? 11);

const entry = { name: "openai/gpt-4o", provider: "openai", model: "gpt-4o", timeoutMs: 60_000, capabilities: {} } as ModelEntry;
const target: Target = {
  entry,
  settings: {
    retry: { attempts: 2, initialMs: 250, maxMs: 8000, maxRetryAfterMs: 20_000 },
    timeouts: { connectMs: 10_000, firstTokenMs: 30_000, idleMs: 30_000 },
    circuitBreaker: { failures: 5, cooldownMs: 30_000 },
  },
} as unknown as Target;
const targets = [target];
const ctx = { breakers: new CircuitBreakers(), pricing: createPricing({}) } as unknown as AppContext;
const reply = { id: "chatcmpl-1", usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } };

function exchange(): Exchange {
  return { requestId: "r1", abort: new RequestAbort(), rateLimits: undefined } as unknown as Exchange;
}

async function straight(): Promise<void> {
  const x = exchange();
  const granted = acquireRateLimit(x, { provider: entry.provider, reserve: { tokens: 10 } });
  const grant = granted instanceof Promise ? await granted : granted;
  const call = providerCall(x, entry.model, entry.timeoutMs);
  const completion = await Promise.resolve(call).then(() => reply);
  grant.settle(completion.usage);
}

const dispose = (): void => {};

async function routed(stream: boolean): Promise<void> {
  const x = exchange();
  const { value, grant } = await routeRequest(ctx, x, {
    targets,
    skip: () => undefined,
    reserve: { tokens: 10 },
    firstToken: stream,
    dispose: stream ? dispose : undefined,
    run: (_target, call) => Promise.resolve(call).then(() => reply),
  });
  grant.settle(value.usage);
}

async function round(run: () => Promise<void>): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < REQUESTS; i++) await run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / REQUESTS;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const WAYS: Record<string, () => Promise<void>> = { straight, routed: () => routed(false), "routed stream": () => routed(true) };
const results = new Map<string, number[]>(Object.keys(WAYS).map((name) => [name, []]));
for (let r = 0; r < ROUNDS; r++) for (const [name, run] of Object.entries(WAYS)) results.get(name)!.push(await round(run));
const base = median(results.get("straight")!);
for (const [name, values] of results) {
  const m = median(values);
  console.log(`${name.padEnd(14)} ${m.toFixed(3)} µs (least ${Math.min(...values).toFixed(3)})${name === "straight" ? "" : `, +${(m - base).toFixed(3)}`}`);
}
