/**
 * CPU per request of this checkout against another, over several runs of the proxy benchmark
 * (README, "Performance"): each run starts both routers afresh and pairs their rounds
 * (`BENCH_BEFORE_ROOT`, alternating rounds); this prints each run's median difference and the
 * median over the runs. A router process now and then settles 15–40 µs per request slower for all
 * of its rounds, whichever version it runs, so one run can mislead where the median of three does
 * not.
 *   npx tsx bench/proxy/compare.ts <before-checkout> [runs=3] [paths=chat-json,chat-stream,anthropic-json,anthropic-stream]
 * The other BENCH_* variables pass through (BENCH_PIN=1 and BENCH_RATE_LIMIT=1, for instance).
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const [before, runsArg = "3", paths = "chat-json,chat-stream,anthropic-json,anthropic-stream"] = process.argv.slice(2);
if (!before) {
  console.error("usage: npx tsx bench/proxy/compare.ts <before-checkout> [runs] [paths]");
  process.exit(2);
}
const RESULTS = fileURLToPath(new URL("../results/", import.meta.url));
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

interface Throughput {
  /** µs per reply of each round; NaN (null in the JSON) for a round without replies. */
  cpuUsPerRound: Array<number | null>;
}
interface Saved {
  results: { paths: Array<{ path: string; throughput: Record<string, Throughput> }> };
}

const orNaN = (value: number | null): number => (value === null ? Number.NaN : value);
const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const latest = (): string | undefined => readdirSync(RESULTS).filter((f) => f.startsWith("proxy-") && f.endsWith(".json")).sort().at(-1);

/**
 * Per run: the median paired difference, and the median paired ratio. The machine's speed can
 * change by half for seconds at a time, both routers alike: a ratio holds through that where a
 * difference doubles, so it is also given in µs at the run's quietest round of the other checkout.
 */
const perPath = new Map<string, Array<{ diff: number; ratio: number; now: number; then: number; quiet: number }>>();
for (let run = 1; run <= Number(runsArg); run++) {
  const previous = latest();
  try {
    execFileSync("npm", ["run", "bench", "--", "proxy"], {
      cwd: ROOT,
      stdio: ["ignore", "ignore", "inherit"],
      env: {
        ...process.env,
        BENCH_BEFORE_ROOT: before,
        BENCH_VIA: "modelmux,before",
        BENCH_PATHS: paths,
        BENCH_LOADS: "50",
        BENCH_STREAMS: "0",
        BENCH_ROUNDS: process.env.BENCH_ROUNDS ?? "8",
        BENCH_SECONDS: process.env.BENCH_SECONDS ?? "2",
      },
    });
  } catch {
    // A missed target makes the benchmark exit 1; its results are still written, which is what counts here.
  }
  const file = latest();
  if (file === undefined || file === previous) throw new Error(`run ${run} wrote no results; see bench/results/logs/`);
  const saved = JSON.parse(readFileSync(`${RESULTS}${file}`, "utf8")) as Saved;
  for (const { path, throughput } of saved.results.paths) {
    if (throughput.modelmux === undefined || throughput.before === undefined) {
      console.log(`run ${run}: ${path} was not measured on both (see bench/results/logs/)`);
      continue;
    }
    const now = throughput.modelmux.cpuUsPerRound.map(orNaN);
    const then = throughput.before.cpuUsPerRound.map(orNaN);
    const diffs = now.map((us, i) => us - then[i]!).filter(Number.isFinite);
    if (diffs.length === 0) continue;
    const ratios = now.map((us, i) => us / then[i]! - 1).filter(Number.isFinite);
    const list = perPath.get(path) ?? [];
    list.push({ diff: median(diffs), ratio: median(ratios), now: median(now.filter(Number.isFinite)), then: median(then.filter(Number.isFinite)), quiet: Math.min(...then.filter(Number.isFinite)) });
    perPath.set(path, list);
  }
  console.log(`run ${run} done (${file})`);
}

const signed = (v: number) => `${v >= 0 ? "+" : "−"}${Math.abs(v).toFixed(1)}`;
console.log(`\nCPU per request, this checkout − ${before} (µs; each run: median of paired rounds, this vs before):`);
for (const [path, runs] of perPath) {
  const each = runs.map((r) => `${signed(r.diff)} (${r.now.toFixed(0)} vs ${r.then.toFixed(0)})`).join("  ");
  console.log(`${path.padEnd(18)} ${each}   median ${signed(median(runs.map((r) => r.diff)))}`);
}
console.log(`\nAs ratios (each run: median of paired rounds' this/before − 1, and that at the run's quietest before round, in µs):`);
for (const [path, runs] of perPath) {
  const each = runs.map((r) => `${signed(r.ratio * 100)}% (${signed(r.ratio * r.quiet)} at ${r.quiet.toFixed(0)})`).join("  ");
  console.log(`${path.padEnd(18)} ${each}   median ${signed(median(runs.map((r) => r.ratio)) * 100)}% ≈ ${signed(median(runs.map((r) => r.ratio * r.quiet)))} µs`);
}
