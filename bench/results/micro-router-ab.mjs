// bench/micro/router-ab.ts
import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
var args = process.argv.slice(2).filter((a) => !a.startsWith("--"));
var flags = new Set(process.argv.slice(2).filter((a) => a.startsWith("--")));
var [other, requestsArg = "2000", roundsArg = "21"] = args;
if (!other) {
  console.error("usage: npx tsx bench/micro/router-ab.ts <other-checkout> [requests] [rounds] [--no-ops] [--prefill] [--batched] [--paths=json,stream]");
  process.exit(2);
}
var REQUESTS = Number(requestsArg);
var ROUNDS = Number(roundsArg);
var NO_OPS = flags.has("--no-ops");
var PREFILL = flags.has("--prefill");
var BATCHED = flags.has("--batched");
var PATHS = ([...flags].find((f) => f.startsWith("--paths="))?.slice("--paths=".length) ?? "json,stream").split(",");
var OPS_MIDDLEWARE = /* @__PURE__ */ new Set(["metrics", "usageCounters", "activity"]);
var KEY = "sk-router-ab";
var CHUNKS = 20;
var created = 17638e5;
var usage = { prompt_tokens: 24, completion_tokens: CHUNKS, total_tokens: 24 + CHUNKS };
var chunk = (delta, finish = null) => ({
  id: "chatcmpl-ab",
  object: "chat.completion.chunk",
  created,
  model: "m1",
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }]
});
function chunks() {
  const list = [chunk({ role: "assistant", content: "" })];
  for (let i = 0; i < CHUNKS; i++) list.push(chunk({ content: i === 0 ? "Routers" : ` token${i}` }));
  list.push(chunk({}, "stop"), { ...chunk({}), choices: [], usage });
  return list;
}
function completion() {
  return {
    id: "chatcmpl-ab",
    object: "chat.completion",
    created,
    model: "m1",
    choices: [{ index: 0, message: { role: "assistant", content: "Routers token1 token2", refusal: null }, logprobs: null, finish_reason: "stop" }],
    usage: { ...usage },
    service_tier: "default"
  };
}
function benchPlugin(core, prefill) {
  const capabilities = { chat: true, streaming: true, tools: true, json_mode: true, json_schema: true, n: true, vision: true, ...prefill && { prefill: true } };
  return core.defineProvider({
    name: "router-ab",
    optionsSchema: { type: "object", additionalProperties: false, properties: {} },
    setup: () => ({
      capabilities: () => ({ ...capabilities }),
      chat: async () => completion(),
      chatStream: async () => (async function* () {
        if (BATCHED) yield chunks();
        else for (const item of chunks()) yield item;
      })()
    })
  });
}
function withoutOps(defaults) {
  const kept = defaults.filter((m) => !OPS_MIDDLEWARE.has(m.name.replace(/\d+$/, "")));
  if (defaults.length - kept.length !== OPS_MIDDLEWARE.size) throw new Error(`--no-ops: found ${defaults.length - kept.length} of the operations middleware in ${defaults.map((m) => m.name).join(", ")}`);
  return kept;
}
async function routerOf(root, measured) {
  const dist = `${root.replace(/\/+$/, "")}/core/dist/index.js`;
  if (!existsSync(dist)) throw new Error(`${dist} is missing: run npm ci in ${root}`);
  const core = await import(pathToFileURL(dist).href);
  const logger = core.createLogger({ level: "info", format: "pretty", write: () => {
  } });
  return core.createRouter(
    {
      auth: { api_keys: [{ key: KEY, app: "bench", developer: "bench" }] },
      providers: { fake: { plugin: "router-ab", models: ["m1"] } }
    },
    {
      logger,
      plugins: { "router-ab": benchPlugin(core, PREFILL) },
      ...measured && NO_OPS && { middleware: (defaults) => withoutOps(defaults) }
    }
  );
}
var body = (stream) => JSON.stringify({ model: "fake/m1", stream, messages: [{ role: "user", content: "Say something about routers." }] });
var BODIES = { json: body(false), stream: body(true) };
async function oneRequest(router, path) {
  const response = await router.fetch(
    new Request("http://127.0.0.1/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: BODIES[path]
    })
  );
  const text = await response.text();
  if (response.status !== 200 || path === "stream" && !text.endsWith("data: [DONE]\n\n")) throw new Error(`${response.status}: ${text.slice(0, 300)}`);
}
async function round(router, path, requests) {
  const start = process.cpuUsage();
  for (let i = 0; i < requests; i++) await oneRequest(router, path);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / requests;
}
var median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
var signed = (v) => `${v >= 0 ? "+" : "\u2212"}${Math.abs(v).toFixed(2)}`;
var ROOT = [...flags].find((f) => f.startsWith("--this="))?.slice("--this=".length) ?? fileURLToPath(new URL("../../", import.meta.url));
var routers = { this: await routerOf(ROOT, true), other: await routerOf(other, false) };
console.log(`router-ab: ${ROOT}${NO_OPS ? " (no ops middleware)" : ""} vs ${other}; ${REQUESTS} requests a round, ${ROUNDS} rounds a way${PREFILL ? ", prefill" : ""}${BATCHED ? ", batched stream" : ""}`);
for (const path of PATHS) {
  for (let i = 0; i < 3; i++) for (const router of Object.values(routers)) await round(router, path, REQUESTS);
  const now = [];
  const then = [];
  for (let r = 0; r < ROUNDS; r++) {
    if (r % 2 === 0) {
      now.push(await round(routers.this, path, REQUESTS));
      then.push(await round(routers.other, path, REQUESTS));
    } else {
      then.push(await round(routers.other, path, REQUESTS));
      now.push(await round(routers.this, path, REQUESTS));
    }
  }
  if (process.env.AB_ROUNDS) console.log(`  this  ${now.map((v) => v.toFixed(0)).join(" ")}
  other ${then.map((v) => v.toFixed(0)).join(" ")}`);
  const diffs = now.map((us, i) => us - then[i]);
  const sortedDiffs = [...diffs].sort((a, b) => a - b);
  const q = (p) => sortedDiffs[Math.min(sortedDiffs.length - 1, Math.floor(p * sortedDiffs.length))];
  console.log(
    `${path.padEnd(6)} this ${median(now).toFixed(2)} \xB5s, other ${median(then).toFixed(2)} \xB5s: ${signed(median(diffs))} \xB5s per request (median of ${ROUNDS} paired rounds; quartiles ${signed(q(0.25))} \u2026 ${signed(q(0.75))})`
  );
}
await Promise.all(Object.values(routers).map((router) => router.close()));
