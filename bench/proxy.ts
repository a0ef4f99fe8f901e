/**
 * modelmux against a direct call and Portkey's gateway (README "Performance"). Six servers, each in its
 * own process on 127.0.0.1: a fake OpenAI/Anthropic upstream with fixed replies (20-chunk streams),
 * a TCP pipe (`proxy/tcp-pipe.ts`: no HTTP, what one more hop on this machine allows), a Node proxy
 * that only copies bytes (`proxy/node-proxy.ts`: the ceiling of any Node HTTP router here), the same
 * proxy reading JSON as every router must (`--json`: the ceiling of such a router), modelmux
 * (`modelmux serve` on a generated config, default `info` access log to a file) and Portkey's
 * gateway (`@portkey-ai/gateway` 1.15.2, installed into bench/portkey/ on first use). The load
 * generator runs here. For each path (chat JSON and stream; modelmux's Anthropic translation, JSON
 * and stream; the responses pass-through, JSON and stream), the same requests are sent straight to
 * the upstream, through the pipe, through the two Node proxies, through modelmux and through
 * Portkey, interleaved in rounds so that drift on a shared machine hits them all alike:
 *
 * 1. Latency, 1 connection: ROUNDS rounds of LATENCY_SECONDS per way (after 300 requests or 1 s each),
 *    requests one after another; p50/p99 of the whole reply and of a stream's first byte.
 * 2. Throughput, 50 connections: a 2 s warm-up per way, then ROUNDS rounds of SECONDS each with
 *    autocannon; req/s is the best round, p50/p99 come from every reply's own duration, router CPU
 *    per request is its CPU time over all rounds divided by their requests, peak RSS is VmHWM over
 *    the path's rounds.
 * 3. modelmux's idle RSS (after start, before any load), and STREAMS (1,000) streams held open at
 *    once (the upstream sends the first chunk, then waits): RSS with all open, errors once released.
 *
 * Environment: BENCH_PATHS=chat-json,… and BENCH_VIA=direct,pipe,node,json,modelmux,portkey select; BENCH_LOADS=1,50;
 * BENCH_SECONDS (3), BENCH_LATENCY_SECONDS (1), BENCH_ROUNDS (3), BENCH_STREAMS (1000, 0 skips);
 * BENCH_LOG_LEVEL (info); BENCH_RATE_LIMIT=1 adds the memory limiter (`proxy/servers.ts`); BENCH_MODELMUX_ROOT runs the modelmux of another checkout (a worktree of an
 * older commit, for before/after figures); BENCH_MODELMUX_YAML appends YAML to that way's config only,
 * top-level keys the generated config does not set
 * (e.g. `routing: { timeouts: { idle: 0 } }`, against `before` of this checkout, for one setting's cost);
 * BENCH_PIN=1 pins the routers to one CPU and the rest to the other (`proxy/processes.ts`), for
 * steady before/after figures (`proxy/compare.ts` repeats such runs); BENCH_NODE_FLAGS adds `node` flags to modelmux's process
 * (e.g. `--max-semi-space-size=4`); BENCH_BEFORE_ROOT adds the `before` way: modelmux of that checkout beside
 * this one's, in the same rounds, for CPU per request before and after a change in one run; BENCH_CPU_PROF=1 (`--cpu-prof`) or BENCH_HEAP_PROF=1 (`proxy/heap-sampler.mjs`)
 * profile the modelmux process into bench/results/profiles/ (written when it stops);
 * `npx tsx bench/proxy/profile-summary.ts <file>` reads them.
 */
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { loadavg } from "node:os";
import { Agent, request } from "undici";
import { summarize, type Row, type Scenario } from "./lib.ts";
import { latencyRun, throughputRun, type RequestSpec } from "./proxy/load.ts";
import { checkReply, MODELMUX_KEY, PATHS, requestFor, VIAS, type PathSpec, type Servers, type Via } from "./proxy/paths.ts";
import { pinSelf, PINNED, ROUTER_CPU, OTHER_CPU, type BenchProcess } from "./proxy/processes.ts";
import { buildRows, type LatencyResult, type PathResult, type StreamsResult, type ThroughputResult } from "./proxy/report.ts";
import { installPortkey, startModelmux, startNodeProxy, startPortkey, startTcpPipe, startUpstream } from "./proxy/servers.ts";

const list = (name: string, all: readonly string[]) => (process.env[name] ? process.env[name]!.split(",").filter((x) => all.includes(x)) : [...all]);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const LATENCY_SECONDS = Number(process.env.BENCH_LATENCY_SECONDS ?? 1);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const STREAMS = Number(process.env.BENCH_STREAMS ?? 1000);
const CONNECTIONS = 50;
const WARMUP = 300;
const WARMUP_SECONDS = 2;
const SELECTED_PATHS = PATHS.filter((path) => list("BENCH_PATHS", PATHS.map((p) => p.name)).includes(path.name));
const SELECTED_VIAS = list("BENCH_VIA", VIAS) as Via[];
const LOADS = list("BENCH_LOADS", ["1", "50"]);
const PROFILES = fileURLToPath(new URL("./results/profiles/", import.meta.url));

/** The 1-, 5- and 15-minute load averages before and after the run. */
interface Load {
  before: number[];
  after?: number[];
}

const say = (text: string) => console.log(`${new Date().toISOString().slice(11, 19)} ${text}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One request through `spec`, checked: undefined when the reply is right, else why not. */
async function probe(path: PathSpec, spec: RequestSpec): Promise<string | undefined> {
  try {
    const res = await fetch(spec.url, { method: "POST", headers: spec.headers, body: spec.body });
    return checkReply(path, res.status, await res.text());
  } catch (error) {
    return (error as Error).message;
  }
}

async function measureLatency(specs: Map<Via, RequestSpec>): Promise<Map<Via, LatencyResult>> {
  const samples = new Map<Via, { total: number[]; firstByte: number[]; errors: number; seconds: number }>();
  for (const [via, spec] of specs) {
    await latencyRun(spec, { count: WARMUP, seconds: 1 });
    samples.set(via, { total: [], firstByte: [], errors: 0, seconds: 0 });
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const [via, spec] of specs) {
      const run = await latencyRun(spec, { seconds: LATENCY_SECONDS });
      const all = samples.get(via)!;
      for (const ms of run.total) all.total.push(ms);
      for (const ms of run.firstByte) all.firstByte.push(ms);
      all.errors += run.errors;
      all.seconds += run.seconds;
    }
  }
  const out = new Map<Via, LatencyResult>();
  for (const [via, all] of samples) out.set(via, { total: summarize(all.total), firstByte: summarize(all.firstByte), errors: all.errors, rps: all.total.length / all.seconds });
  return out;
}

async function measureThroughput(specs: Map<Via, RequestSpec>, routers: Partial<Record<Via, BenchProcess>>, upstream: BenchProcess): Promise<Map<Via, ThroughputResult>> {
  for (const [via] of specs) routers[via]?.resetPeak();
  for (const [, spec] of specs) await throughputRun(spec, CONNECTIONS, WARMUP_SECONDS);
  const out = new Map<Via, ThroughputResult>();
  for (const [via] of specs) out.set(via, { rounds: [], durations: [], ok: 0, errors: 0, cpuMs: 0, cpuUsPerRound: [], upstreamCpuMs: 0, peakMb: Number.NaN });
  const ways = [...specs];
  for (let round = 0; round < ROUNDS; round++) {
    // Each way first in turn: going first or last in a round must not favour one of them.
    const order = round % 2 ? [...ways].reverse() : ways;
    for (const [via, spec] of order) {
      const router = routers[via];
      const before = router?.sample();
      const upstreamBefore = upstream.sample();
      const run = await throughputRun(spec, CONNECTIONS, SECONDS);
      const result = out.get(via)!;
      if (router && before) {
        const cpuMs = router.sample().cpuMs - before.cpuMs;
        result.cpuMs += cpuMs;
        // NaN for a round with no reply: the rounds of the two ways stay paired by their index.
        result.cpuUsPerRound.push(run.ok > 0 ? (cpuMs * 1000) / run.ok : Number.NaN);
      }
      result.upstreamCpuMs += upstream.sample().cpuMs - upstreamBefore.cpuMs;
      result.rounds.push(run.ok / run.seconds);
      // A loop, not push(...): a fast round has more replies than the call stack takes arguments.
      for (const ms of run.durations) result.durations.push(ms);
      result.ok += run.ok;
      result.errors += run.errors;
    }
  }
  for (const [via, result] of out) if (routers[via]) result.peakMb = routers[via]!.sample().peakMb;
  return out;
}

/** Opens `count` streams through modelmux at once, samples its RSS, releases them, reads them out. */
async function holdStreams(count: number, modelmux: BenchProcess, upstream: string): Promise<StreamsResult> {
  const agent = new Agent({ connections: count, keepAliveTimeout: 10_000 });
  const body = JSON.stringify({ model: "fake/hold", stream: true, messages: [{ role: "user", content: "hold" }] });
  const headers = { "content-type": "application/json", authorization: `Bearer ${MODELMUX_KEY}` };
  modelmux.resetPeak();
  let opened = 0;
  let markAllOpen: () => void;
  const allOpen = new Promise<void>((resolve) => (markAllOpen = resolve));
  const streams = Array.from({ length: count }, async () => {
    const res = await request(`${modelmux.url}/v1/chat/completions`, { method: "POST", headers, body, dispatcher: agent });
    let text = "";
    let first = true;
    for await (const part of res.body) {
      text += part.toString();
      if (first && ++opened === count) markAllOpen();
      first = false;
    }
    return res.statusCode === 200 && text.endsWith("data: [DONE]\n\n");
  });
  const settled = Promise.allSettled(streams);
  const timedOut = await Promise.race([allOpen!.then(() => false), settled.then(() => false), sleep(60_000).then(() => true)]);
  await sleep(500);
  const open = modelmux.sample();
  await fetch(`${upstream}/__release`, { method: "POST" }).then((res) => res.text());
  const results = await settled;
  await agent.close();
  const errors = results.filter((r) => r.status === "rejected" || !r.value).length;
  return { count, opened, timedOut, errors, rssMb: open.rssMb, peakMb: modelmux.sample().peakMb };
}

const scenario: Scenario = {
  description: "modelmux vs a direct call, a byte-copying Node proxy and Portkey's gateway: latency at 1 connection, throughput at 50, CPU and memory",
  async run() {
    const load: Load = { before: loadavg() };
    say(`load average ${load.before.map((x) => x.toFixed(2)).join(" ")} (2 cores: more than ~0.5 means someone else is busy)`);
    pinSelf();
    if (PINNED) say(`pinned: the routers on CPU ${ROUTER_CPU}, the load generator and the upstream on CPU ${OTHER_CPU}`);
    const processes: BenchProcess[] = [];
    const notes: Record<string, string> = {};
    const results: PathResult[] = [];
    let idle: Record<string, number> = {};
    let streams: StreamsResult | undefined;
    try {
      const upstream = await startUpstream();
      processes.push(upstream);
      say(`fake upstream at ${upstream.url}`);
      const routers: Partial<Record<Via, BenchProcess>> = {};
      const servers: Servers = { upstream: upstream.url };
      if (SELECTED_VIAS.includes("direct")) servers.direct = upstream.url;
      if (SELECTED_VIAS.includes("pipe")) {
        const pipe = await startTcpPipe(upstream.url);
        processes.push(pipe);
        routers.pipe = pipe;
        servers.pipe = pipe.url;
        say(`TCP pipe (no HTTP: what one more hop allows) at ${pipe.url}`);
      }
      if (SELECTED_VIAS.includes("node")) {
        const node = await startNodeProxy(upstream.url);
        processes.push(node);
        routers.node = node;
        servers.node = node.url;
        say(`Node proxy (copies bytes: the ceiling) at ${node.url}`);
      }
      if (SELECTED_VIAS.includes("json")) {
        const json = await startNodeProxy(upstream.url, true);
        processes.push(json);
        routers.json = json;
        servers.json = json.url;
        say(`Node proxy reading JSON (the ceiling of a router that checks requests and reads replies) at ${json.url}`);
      }
      const nodeFlags = [
        ...(process.env.BENCH_NODE_FLAGS?.split(" ").filter(Boolean) ?? []),
        ...(process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${PROFILES}`] : []),
        ...(process.env.BENCH_HEAP_PROF ? ["--import", fileURLToPath(new URL("./proxy/heap-sampler.mjs", import.meta.url))] : []),
      ];
      if (nodeFlags.length > 0) {
        mkdirSync(PROFILES, { recursive: true });
        process.env.BENCH_HEAP_PROF_DIR = PROFILES;
      }
      if (SELECTED_VIAS.includes("modelmux")) {
        const modelmux = await startModelmux({
          upstream: upstream.url,
          responses: true,
          logLevel: process.env.BENCH_LOG_LEVEL ?? "info",
          nodeFlags,
          root: process.env.BENCH_MODELMUX_ROOT,
          ...(process.env.BENCH_MODELMUX_YAML && { extraYaml: process.env.BENCH_MODELMUX_YAML }),
        });
        processes.push(modelmux);
        routers.modelmux = modelmux;
        servers.modelmux = modelmux.url;
        say(`modelmux at ${modelmux.url} (log ${modelmux.logFile})`);
      }
      const beforeRoot = process.env.BENCH_BEFORE_ROOT;
      if (beforeRoot && SELECTED_VIAS.includes("before")) {
        const before = await startModelmux({ upstream: upstream.url, responses: true, logLevel: process.env.BENCH_LOG_LEVEL ?? "info", nodeFlags, root: beforeRoot, name: "before" });
        processes.push(before);
        routers.before = before;
        servers.before = before.url;
        say(`modelmux of ${beforeRoot} (before) at ${before.url}`);
      }
      if (SELECTED_VIAS.includes("portkey")) {
        const problem = await installPortkey();
        if (problem) notes.portkey = problem;
        else {
          try {
            const portkey = await startPortkey();
            processes.push(portkey);
            routers.portkey = portkey;
            servers.portkey = portkey.url;
            say(`Portkey's gateway at ${portkey.url}`);
          } catch (error) {
            notes.portkey = `did not start: ${(error as Error).message.split("\n")[0]}`;
          }
        }
        if (notes.portkey) say(`Portkey: ${notes.portkey}`);
      }
      await sleep(2000);
      idle = Object.fromEntries(Object.entries(routers).map(([via, p]) => [via, p.sample().rssMb]));

      for (const path of SELECTED_PATHS) {
        const specs = new Map<Via, RequestSpec>();
        const unavailable: Partial<Record<Via, string>> = {};
        for (const via of SELECTED_VIAS) {
          const spec = requestFor(path, via, servers);
          if (!spec) {
            unavailable[via] = notes[via] ?? "not running";
            continue;
          }
          const problem = await probe(path, spec);
          if (problem) unavailable[via] = `not available: ${problem.split("\n")[0]!.slice(0, 160)}`;
          else specs.set(via, spec);
        }
        for (const [via, why] of Object.entries(unavailable)) say(`${path.label} via ${via}: ${why}`);
        const result: PathResult = { path, unavailable, latency: new Map(), throughput: new Map() };
        if (LOADS.includes("1") && specs.size > 0) {
          say(`${path.label}: 1 connection, ${ROUNDS} rounds of ${LATENCY_SECONDS} s per way…`);
          result.latency = await measureLatency(specs);
        }
        if (LOADS.includes("50") && specs.size > 0) {
          say(`${path.label}: ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s per way…`);
          result.throughput = await measureThroughput(specs, routers, upstream);
        }
        results.push(result);
      }

      if (routers.modelmux && STREAMS > 0) {
        say(`${STREAMS} streams held open through modelmux…`);
        streams = await holdStreams(STREAMS, routers.modelmux, upstream.url);
      }
    } finally {
      // modelmux writes its profiles when it exits: give it a graceful stop.
      for (const p of processes.reverse()) await p.stop();
    }
    load.after = loadavg();
    say(`load average ${load.after.map((x) => x.toFixed(2)).join(" ")}`);
    const rows: Row[] = buildRows(results, { idle, streams, notes });
    return { rows, results: { settings: { SECONDS, LATENCY_SECONDS, ROUNDS, CONNECTIONS, STREAMS }, load, idle, streams, notes, paths: results.map(serialise) } };
  },
};


function serialise(result: PathResult) {
  return {
    path: result.path.name,
    unavailable: result.unavailable,
    latency: Object.fromEntries(result.latency),
    throughput: Object.fromEntries(
      [...result.throughput].map(([via, t]) => [via, { ...t, durations: summarize(t.durations), cpuUsPerRequest: (t.cpuMs * 1000) / t.ok, upstreamCpuUsPerRequest: (t.upstreamCpuMs * 1000) / t.ok }]),
    ),
  };
}

export default scenario;
