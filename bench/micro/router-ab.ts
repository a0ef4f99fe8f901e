/**
 * CPU per request of this checkout's router against another checkout's, both in one process
 * (README, "Performance"): each checkout's compiled core (`core/dist/`) builds a router with the
 * same in-process provider (fixed replies, no network, the same code for both), and rounds of
 * requests through `router.fetch` alternate between the two. Both routers see the same machine
 * at the same moments, so a change of a few µs shows where two processes measured apart differ
 * by more than that from run to run.
 *   npx tsx bench/micro/router-ab.ts <other-checkout> [requests=2000] [rounds=21] [flags]
 * Flags: --no-ops (this checkout without its metrics, usage and activity middleware),
 * --prefill (the model may continue a broken stream, where the checkout knows the capability),
 * --paths=json,stream (default both), --batched (a stream's chunks in one read, else one a read),
 * --this=<checkout> (measure that checkout in this one's place).
 */
import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

const args = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const flags = new Set(process.argv.slice(2).filter((a) => a.startsWith("--")));
const [other, requestsArg = "2000", roundsArg = "21"] = args;
if (!other) {
  console.error("usage: npx tsx bench/micro/router-ab.ts <other-checkout> [requests] [rounds] [--no-ops] [--prefill] [--batched] [--paths=json,stream]");
  process.exit(2);
}
const REQUESTS = Number(requestsArg);
const ROUNDS = Number(roundsArg);
const NO_OPS = flags.has("--no-ops");
const PREFILL = flags.has("--prefill");
const BATCHED = flags.has("--batched");
const PATHS = ([...flags].find((f) => f.startsWith("--paths="))?.slice("--paths=".length) ?? "json,stream").split(",");
const OPS_MIDDLEWARE = new Set(["metrics", "usageCounters", "activity"]);
const KEY = "sk-router-ab";

/* eslint-disable @typescript-eslint/no-explicit-any -- two builds of the core, typed by neither */
type Core = any;

const CHUNKS = 20;
const created = 1_763_800_000;
const usage = { prompt_tokens: 24, completion_tokens: CHUNKS, total_tokens: 24 + CHUNKS };
const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: "chatcmpl-ab",
  object: "chat.completion.chunk",
  created,
  model: "m1",
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
});
function chunks(): object[] {
  const list: object[] = [chunk({ role: "assistant", content: "" })];
  for (let i = 0; i < CHUNKS; i++) list.push(chunk({ content: i === 0 ? "Routers" : ` token${i}` }));
  list.push(chunk({}, "stop"), { ...chunk({}), choices: [], usage });
  return list;
}
function completion(): object {
  return {
    id: "chatcmpl-ab",
    object: "chat.completion",
    created,
    model: "m1",
    choices: [{ index: 0, message: { role: "assistant", content: "Routers token1 token2", refusal: null }, logprobs: null, finish_reason: "stop" }],
    usage: { ...usage },
    service_tier: "default",
  };
}

/** The provider both routers call: fixed replies, in process; it reads nothing of the call. */
function benchPlugin(core: Core, prefill: boolean) {
  const capabilities = { chat: true, streaming: true, tools: true, json_mode: true, json_schema: true, n: true, vision: true, ...(prefill && { prefill: true }) };
  return core.defineProvider({
    name: "router-ab",
    optionsSchema: { type: "object", additionalProperties: false, properties: {} },
    setup: () => ({
      capabilities: () => ({ ...capabilities }),
      chat: async () => completion(),
      chatStream: async () =>
        (async function* () {
          if (BATCHED) yield chunks();
          else for (const item of chunks()) yield item;
        })(),
    }),
  });
}

/** The defaults without the operations middleware; a bundle may have suffixed their names (`metrics2`). */
function withoutOps<T extends { name: string }>(defaults: readonly T[]): T[] {
  const kept = defaults.filter((m) => !OPS_MIDDLEWARE.has(m.name.replace(/\d+$/, "")));
  if (defaults.length - kept.length !== OPS_MIDDLEWARE.size) throw new Error(`--no-ops: found ${defaults.length - kept.length} of the operations middleware in ${defaults.map((m) => m.name).join(", ")}`);
  return kept;
}

async function routerOf(root: string, measured: boolean): Promise<{ fetch(request: Request): Promise<Response>; close(): Promise<void> }> {
  const dist = `${root.replace(/\/+$/, "")}/core/dist/index.js`;
  if (!existsSync(dist)) throw new Error(`${dist} is missing: run npm ci in ${root}`);
  const core: Core = await import(pathToFileURL(dist).href);
  // The access log is formatted as in production, and written nowhere.
  const logger = core.createLogger({ level: "info", format: "pretty", write: () => {} });
  return core.createRouter(
    {
      auth: { api_keys: [{ key: KEY, app: "bench", developer: "bench" }] },
      providers: { fake: { plugin: "router-ab", models: ["m1"] } },
    },
    {
      logger,
      plugins: { "router-ab": benchPlugin(core, PREFILL) },
      ...(measured && NO_OPS && { middleware: (defaults: readonly { name: string }[]) => withoutOps(defaults) }),
    },
  );
}

const body = (stream: boolean) => JSON.stringify({ model: "fake/m1", stream, messages: [{ role: "user", content: "Say something about routers." }] });
const BODIES = { json: body(false), stream: body(true) };

async function oneRequest(router: { fetch(request: Request): Promise<Response> }, path: "json" | "stream"): Promise<void> {
  const response = await router.fetch(
    new Request("http://127.0.0.1/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: BODIES[path],
    }),
  );
  const text = await response.text();
  if (response.status !== 200 || (path === "stream" && !text.endsWith("data: [DONE]\n\n"))) throw new Error(`${response.status}: ${text.slice(0, 300)}`);
}

async function round(router: { fetch(request: Request): Promise<Response> }, path: "json" | "stream", requests: number): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < requests; i++) await oneRequest(router, path);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / requests;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const signed = (v: number) => `${v >= 0 ? "+" : "−"}${Math.abs(v).toFixed(2)}`;

// --this=<checkout> measures another checkout in this one's place (bisecting a change).
const ROOT = [...flags].find((f) => f.startsWith("--this="))?.slice("--this=".length) ?? fileURLToPath(new URL("../../", import.meta.url));
const routers = { this: await routerOf(ROOT, true), other: await routerOf(other, false) };
console.log(`router-ab: ${ROOT}${NO_OPS ? " (no ops middleware)" : ""} vs ${other}; ${REQUESTS} requests a round, ${ROUNDS} rounds a way${PREFILL ? ", prefill" : ""}${BATCHED ? ", batched stream" : ""}`);
for (const path of PATHS as Array<"json" | "stream">) {
  // Warm-up: both builds optimised before anything counts.
  for (let i = 0; i < 3; i++) for (const router of Object.values(routers)) await round(router, path, REQUESTS);
  const now: number[] = [];
  const then: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    // Which goes first alternates, so neither always follows the other's garbage.
    if (r % 2 === 0) {
      now.push(await round(routers.this, path, REQUESTS));
      then.push(await round(routers.other, path, REQUESTS));
    } else {
      then.push(await round(routers.other, path, REQUESTS));
      now.push(await round(routers.this, path, REQUESTS));
    }
  }
  if (process.env.AB_ROUNDS) console.log(`  this  ${now.map((v) => v.toFixed(0)).join(" ")}\n  other ${then.map((v) => v.toFixed(0)).join(" ")}`);
  const diffs = now.map((us, i) => us - then[i]!);
  const sortedDiffs = [...diffs].sort((a, b) => a - b);
  const q = (p: number) => sortedDiffs[Math.min(sortedDiffs.length - 1, Math.floor(p * sortedDiffs.length))]!;
  console.log(
    `${path.padEnd(6)} this ${median(now).toFixed(2)} µs, other ${median(then).toFixed(2)} µs: ${signed(median(diffs))} µs per request (median of ${ROUNDS} paired rounds; quartiles ${signed(q(0.25))} … ${signed(q(0.75))})`,
  );
}
await Promise.all(Object.values(routers).map((router) => router.close()));
