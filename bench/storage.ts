/**
 * Stored chat completions (the targets of the README, "Stored completions") on
 * `@modelmux/storage-unstorage`, once per driver: memory; fs in a temporary directory (removed
 * after); redis at REDIS_URL (default redis://127.0.0.1:6379) under a key prefix of its own
 * (removed after with SCAN + UNLINK; the driver is skipped with a message when Redis does not
 * answer). `BENCH_DRIVERS=fs,redis` runs only those. For each driver:
 *
 * 1. Seed STORED completions (100,000; `BENCH_STORED=…` to change) through `Storage.saveCompletion`,
 *    32 in flight: 2 messages, a short reply, 4 models in turn, metadata {team: 1 of 10, env: 1 of 3,
 *    n: i}, one per second of `createdAt` ending now. Reports the rate.
 * 2. List a page of 20 for each query in `listQueries`: 20 warm-ups, then 200 sequential timed
 *    calls (each page is checked: 20 items, `hasMore`, filters honoured).
 *    Target: p50 < 20 ms on memory and redis, < 50 ms on fs.
 * 3. `saveCompletion` alone: 2,000 sequential saves into the seeded store.
 * 4. What storing adds to a request: a real router (`createRouter` + `startServer` on 127.0.0.1:0,
 *    the echo provider, this same seeded storage) and one keep-alive undici connection; sequential
 *    POST /v1/chat/completions, identical but for `store`, 20 rounds of 100 with `store: false` and
 *    100 with `store: true`, alternating which goes first (after 100 warm-ups of each).
 *    Target: p50(store: true) − p50(store: false) < 1 ms.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "undici";
import { createHttpClient, createLogger, createRouter, defineStorage, startServer, type CompletionListQuery, type CompletionPage, type Storage, type StoredCompletion } from "@modelmux/core";
import unstorage, { type UnstorageOptions } from "@modelmux/storage-unstorage";
import { deletePrefix, probeRedis, REDIS_URL } from "../plugins/storage-unstorage/test/redis-gate.ts";
import { ms, pool, summarize, time, verdict, type Row, type Scenario, type Summary } from "./lib.ts";

const STORED = Number(process.env.BENCH_STORED ?? 100_000);
const SEED_CONCURRENCY = 32;
const LIST_WARMUP = 20;
const LIST_SAMPLES = 200;
const SAVE_SAMPLES = 2_000;
const HTTP_WARMUP = 100;
const ROUNDS = 20;
const PER_ROUND = 100;
const LIST_TARGET_MS = { memory: 20, fs: 50, redis: 20 };
const STORE_TARGET_MS = 1;
const MODELS = ["echo-1", "echo-2", "echo-3", "echo-4"];
const ENVS = ["prod", "staging", "dev"];
const KEY = "sk-bench-0123456789";

type Driver = keyof typeof LIST_TARGET_MS;
const DRIVERS = (process.env.BENCH_DRIVERS ?? "memory,fs,redis").split(",").filter((name): name is Driver => Object.hasOwn(LIST_TARGET_MS, name));

/** Request i's model, messages and metadata: the same shapes for seeded and HTTP traffic. */
function requestOf(i: number) {
  const model = MODELS[i % MODELS.length]!;
  return {
    model,
    messages: [
      { role: "system" as const, content: "You are a concise assistant. Answer in one sentence." },
      { role: "user" as const, content: `Question ${i}: in one sentence, what does a model router do with request ${i}?` },
    ],
    // team and env cycle with coprime periods, so every (team, env) pair holds 1/30 of the store.
    metadata: { team: `team-${i % 10}`, env: ENVS[i % 3]!, n: String(i) },
  };
}

function storedCompletion(i: number, createdAt: number): StoredCompletion {
  const { model, messages, metadata } = requestOf(i);
  const content = `A model router sends request ${i} to the provider serving ${model} and answers in one format.`;
  return {
    owner: "default",
    completion: {
      id: `chatcmpl-bench-${randomUUID()}`,
      object: "chat.completion",
      created: Math.floor(createdAt / 1000),
      model,
      choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content, refusal: null }, logprobs: null }],
      usage: { prompt_tokens: 31, completion_tokens: 22, total_tokens: 53 },
    },
    messages,
    model: `echo/${model}`,
    metadata,
    createdAt,
  };
}

/** The list queries timed, given the seeded ids in storing order. */
function listQueries(ids: string[]): Array<[string, CompletionListQuery]> {
  return [
    ["first page, asc", { owner: "default", limit: 20, order: "asc" }],
    ["first page, desc", { owner: "default", limit: 20, order: "desc" }],
    ["deep page (after the middle), asc", { owner: "default", limit: 20, order: "asc", after: ids[ids.length >> 1] }],
    ["model=echo/echo-2, desc", { owner: "default", limit: 20, order: "desc", model: "echo/echo-2" }],
    ["metadata team=team-3, desc", { owner: "default", limit: 20, order: "desc", metadata: { team: "team-3" } }],
    ["metadata team=team-3 & env=prod, desc", { owner: "default", limit: 20, order: "desc", metadata: { team: "team-3", env: "prod" } }],
  ];
}

function checkPage(label: string, query: CompletionListQuery, page: CompletionPage | undefined): void {
  const wrong = (item: StoredCompletion) =>
    (query.model !== undefined && item.model !== query.model) || Object.entries(query.metadata ?? {}).some(([k, v]) => item.metadata[k] !== v);
  if (!page || page.data.length !== query.limit || !page.hasMore || page.data.some(wrong)) {
    throw new Error(`list "${label}" did not return a full, matching page with more to come`);
  }
}

/** The plugin options for a driver and how to remove its data, or why it is skipped. */
async function prepare(driver: Driver): Promise<{ options: UnstorageOptions; cleanup: () => Promise<void> } | { skip: string }> {
  const prefix = `modelmux-bench-${process.pid}-${Date.now()}`;
  if (driver === "memory") return { options: { driver, prefix }, cleanup: async () => {} };
  if (driver === "fs") {
    const base = await mkdtemp(join(tmpdir(), "modelmux-bench-"));
    return { options: { driver, base, prefix }, cleanup: () => rm(base, { recursive: true, force: true }) };
  }
  const problem = await probeRedis();
  if (problem !== undefined) return { skip: `Redis is not reachable at ${REDIS_URL} (${problem}); start it as DEVELOPERS.md says, or set REDIS_URL` };
  return { options: { driver, url: REDIS_URL, prefix }, cleanup: async () => void (await deletePrefix(prefix)) };
}

const logger = createLogger({ level: "warn" });

/** Sequential POSTs through a real router on `storage`, store: false and true in alternating rounds. */
async function storeOverhead(storage: Storage, firstIndex: number): Promise<{ plain: Summary; stored: Summary }> {
  // The seeded instance, handed to the router by reference; closing it stays the caller's job.
  const seeded = defineStorage({ contract: 2, name: "bench-seeded", optionsSchema: { type: "object" }, setup: () => ({ ...storage, close: () => {} }) });
  const config = { auth: { api_keys: [{ key: KEY }] }, providers: { echo: { plugin: "provider-echo", models: MODELS } }, storage: { plugin: "bench-seeded" } };
  const router = await createRouter(config, { logger, plugins: { "bench-seeded": seeded } });
  const server = await startServer(router, { host: "127.0.0.1", port: 0 });
  const agent = new Agent({ connections: 1, keepAliveTimeout: 60_000 });
  const url = `${server.url}/v1/chat/completions`;
  const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
  let n = firstIndex;
  const post = async (store: boolean): Promise<number> => {
    const { model, messages, metadata } = requestOf(n++);
    const body = JSON.stringify({ model: `echo/${model}`, messages, metadata, store });
    let status = 0;
    const elapsed = await time(async () => {
      const response = await request(url, { method: "POST", headers, body, dispatcher: agent });
      status = response.statusCode;
      await response.body.text();
    });
    if (status !== 200) throw new Error(`POST /v1/chat/completions (store: ${store}) answered ${status}`);
    return elapsed;
  };
  const samples = { plain: [] as number[], stored: [] as number[] };
  try {
    for (let i = 0; i < HTTP_WARMUP * 2; i++) await post(i % 2 === 1);
    for (let round = 0; round < ROUNDS; round++) {
      for (const store of round % 2 === 0 ? [false, true] : [true, false]) {
        for (let i = 0; i < PER_ROUND; i++) samples[store ? "stored" : "plain"].push(await post(store));
      }
    }
  } finally {
    await agent.close();
    await server.stop();
  }
  return { plain: summarize(samples.plain), stored: summarize(samples.stored) };
}

/** Every measurement on one driver; `row` adds a line to the table. */
async function benchDriver(driver: Driver, storage: Storage, row: (measure: string, cells: Partial<Row>) => void) {
  const say = (text: string) => console.log(`${driver.padEnd(6)} ${text}`);

  say(`seeding ${STORED.toLocaleString("en")} completions, ${SEED_CONCURRENCY} in flight…`);
  const ids: string[] = new Array<string>(STORED);
  const start = Date.now() - (STORED + 1) * 1000;
  const seedMs = await time(() =>
    pool(STORED, SEED_CONCURRENCY, async (i) => {
      const entry = storedCompletion(i, start + i * 1000);
      ids[i] = entry.completion.id;
      await storage.saveCompletion(entry);
    }),
  );
  const seed = { ms: Math.round(seedMs), perSecond: Math.round((STORED / seedMs) * 1000) };
  row(`seed ${STORED.toLocaleString("en")} (${SEED_CONCURRENCY} in flight)`, { note: `${seed.perSecond.toLocaleString("en")}/s, ${(seedMs / 1000).toFixed(1)} s` });

  say(`listing pages of 20 (${LIST_SAMPLES} samples per query)…`);
  const list: Record<string, Summary> = {};
  for (const [label, query] of listQueries(ids)) {
    checkPage(label, query, await storage.listCompletions(query));
    for (let i = 0; i < LIST_WARMUP; i++) await storage.listCompletions(query);
    const samples: number[] = [];
    for (let i = 0; i < LIST_SAMPLES; i++) samples.push(await time(() => storage.listCompletions(query)));
    const summary = (list[label] = summarize(samples));
    const target = LIST_TARGET_MS[driver];
    row(`list 20: ${label}`, { p50: ms(summary.p50), p99: ms(summary.p99), target: `p50 < ${target} ms`, result: verdict(summary.p50 < target) });
  }

  say(`saveCompletion alone (${SAVE_SAMPLES.toLocaleString("en")} sequential)…`);
  const saveSamples: number[] = [];
  for (let i = 0; i < SAVE_SAMPLES; i++) {
    const entry = storedCompletion(STORED + i, Date.now());
    saveSamples.push(await time(() => storage.saveCompletion(entry)));
  }
  const save = summarize(saveSamples);
  row("saveCompletion alone", { p50: ms(save.p50), p99: ms(save.p99) });

  say(`POST /v1/chat/completions through a router, ${ROUNDS} rounds of ${PER_ROUND} per kind…`);
  const http = await storeOverhead(storage, STORED + SAVE_SAMPLES);
  const overhead = http.stored.p50 - http.plain.p50;
  row("POST, store: false", { p50: ms(http.plain.p50), p99: ms(http.plain.p99) });
  row("POST, store: true", { p50: ms(http.stored.p50), p99: ms(http.stored.p99) });
  row("storing adds (p50 difference)", { p50: ms(overhead), target: `< ${STORE_TARGET_MS} ms`, result: verdict(overhead < STORE_TARGET_MS) });

  return { stored: STORED, seed, list, save, http: { ...http, overheadP50: overhead } };
}

const scenario: Scenario = {
  description: `storage-unstorage on ${DRIVERS.join(", ")} with ${STORED.toLocaleString("en")} stored completions: list p50/p99, save, store overhead`,
  async run() {
    const rows: Row[] = [];
    const results: Record<string, unknown> = {};
    const http = createHttpClient(); // PluginContext wants one; storage never uses it
    try {
      for (const driver of DRIVERS) {
        const row = (measure: string, cells: Partial<Row>) =>
          rows.push({ driver, measure, p50: "", p99: "", target: "", result: "", note: "", ...(cells as Row) });
        const prepared = await prepare(driver);
        if ("skip" in prepared) {
          console.log(`${driver.padEnd(6)} skipped: ${prepared.skip}`);
          row("skipped", { note: prepared.skip });
          results[driver] = { skipped: prepared.skip };
          continue;
        }
        const storage = await unstorage.setup(prepared.options, { name: "storage", logger: logger.withTag("storage:unstorage"), http, ttlMs: undefined });
        try {
          results[driver] = await benchDriver(driver, storage, row);
        } finally {
          await storage.close?.();
          const cleanupMs = await time(prepared.cleanup);
          console.log(`${driver.padEnd(6)} data removed in ${(cleanupMs / 1000).toFixed(1)} s`);
        }
      }
    } finally {
      await http.close();
      logger.flush();
    }
    return { rows, results };
  },
};

export default scenario;
