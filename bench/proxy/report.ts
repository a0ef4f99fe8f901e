/**
 * The proxy benchmark's table and the issue's targets. One row per path, way through and load;
 * modelmux's rows carry the targets that apply to them (a missed one is marked ✗) and one verdict.
 * The pipe's and the Node proxies' own `vs direct` show what the machine leaves to any router.
 * `vs direct`, `vs node` (the byte-copying proxy), `vs json` (the JSON-reading one) and `vs Portkey`
 * compare at 1 connection the added p50 (first byte for a stream) or its ratio, at 50 connections
 * the best req/s.
 */
import { ms, verdict, type Row, type Summary } from "../lib.ts";
import type { PathKind, PathSpec, Via } from "./paths.ts";

/** The targets (README, "Performance": "targets missed"). */
export const TARGETS = {
  /** Added p50 at 1 connection, ms: the whole JSON reply, a stream's first byte. */
  addedJsonMs: 0.25,
  addedFirstByteMs: 0.4,
  /** Throughput at 50 connections, best round, as a share of direct. */
  ofDirect: { json: 0.4, "pass-through stream": 0.45, "translated stream": 0.3 } satisfies Record<PathKind, number>,
  /** JSON throughput as a multiple of Portkey's. */
  timesPortkeyJson: 6,
  /** Router CPU time per request at 50 connections, µs. */
  cpuUs: { json: 170, "pass-through stream": 250, "translated stream": 375 } satisfies Record<PathKind, number>,
  idleMb: 80,
  peakMb: 130,
  streamsMb: 250,
};

export interface LatencyResult {
  total: Summary;
  firstByte: Summary;
  errors: number;
  rps: number;
}

export interface ThroughputResult {
  /** req/s of each round. */
  rounds: number[];
  /** Every 200 reply's duration, ms. */
  durations: number[];
  ok: number;
  errors: number;
  /** Router CPU time over all rounds (0 for direct). */
  cpuMs: number;
  /** Router CPU per reply of each round, µs (empty for direct): `before` compares round by round. */
  cpuUsPerRound: number[];
  upstreamCpuMs: number;
  /** Router VmHWM over the warm-up and the rounds (NaN for direct). */
  peakMb: number;
}

export interface PathResult {
  path: PathSpec;
  /** Ways through that were not measured, and why. */
  unavailable: Partial<Record<Via, string>>;
  latency: Map<Via, LatencyResult>;
  throughput: Map<Via, ThroughputResult>;
}

export interface StreamsResult {
  count: number;
  /** Streams whose first chunk arrived before the release. */
  opened: number;
  timedOut: boolean;
  /** Streams that failed or did not end with `[DONE]`. */
  errors: number;
  /** modelmux's RSS with every stream open, and its peak. */
  rssMb: number;
  peakMb: number;
}

const mb = (value: number) => (Number.isFinite(value) ? `${value.toFixed(0)} MB` : "");
const ratio = (value: number) => (Number.isFinite(value) ? `${value.toFixed(value < 10 ? 2 : 1)}×` : "");
const added = (value: number) => `${value >= 0 ? "+" : ""}${value.toFixed(2)} ms`;
const best = (rounds: number[]) => Math.max(...rounds);

/** A list of checks: the cell lists them, a missed one marked ✗; the verdict is PASS when all pass. */
class Checks {
  private readonly items: Array<{ label: string; pass: boolean }> = [];
  add(label: string, value: number, pass: (value: number) => boolean): void {
    if (Number.isFinite(value)) this.items.push({ label, pass: pass(value) });
  }
  cells(): Partial<Row> {
    if (this.items.length === 0) return {};
    return { target: this.items.map(({ label, pass }) => (pass ? label : `${label} ✗`)).join(", "), result: verdict(this.items.every((item) => item.pass)) };
  }
}

function latencyRows(result: PathResult): Row[] {
  const { path, latency } = result;
  const key = (via: Via) => (path.stream ? latency.get(via)?.firstByte.p50 : latency.get(via)?.total.p50) ?? Number.NaN;
  return [...latency].map(([via, l]) => {
    const checks = new Checks();
    const overDirect = key(via) - key("direct");
    if (via === "modelmux") {
      const limit = path.stream ? TARGETS.addedFirstByteMs : TARGETS.addedJsonMs;
      checks.add(`+${path.stream ? "first byte" : "p50"} ≤ ${limit} ms`, overDirect, (v) => v <= limit);
    }
    return {
      path: path.label,
      via,
      conns: "1",
      "req/s": l.rps.toFixed(0),
      p50: ms(l.total.p50),
      p99: ms(l.total.p99),
      "first byte": path.stream ? ms(l.firstByte.p50) : "",
      errors: String(l.errors),
      "vs direct": via === "direct" || !Number.isFinite(overDirect) ? "" : added(overDirect),
      "vs node": via === "modelmux" && latency.has("node") ? added(key("modelmux") - key("node")) : "",
      "vs json": via === "modelmux" && latency.has("json") ? added(key("modelmux") - key("json")) : "",
      "vs Portkey": via === "modelmux" ? ratio(key("modelmux") / key("portkey")) : "",
      ...checks.cells(),
    };
  });
}

function throughputRows(result: PathResult): Row[] {
  const { path, throughput } = result;
  const rps = (via: Via) => (throughput.has(via) ? best(throughput.get(via)!.rounds) : Number.NaN);
  return [...throughput].map(([via, t]) => {
    const sorted = [...t.durations].sort((a, b) => a - b);
    const at = (p: number) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
    const cpuUs = via === "direct" ? Number.NaN : (t.cpuMs * 1000) / t.ok;
    const checks = new Checks();
    if (via === "modelmux") {
      const share = TARGETS.ofDirect[path.kind];
      checks.add(`≥ ${share.toFixed(2)}× direct`, rps("modelmux") / rps("direct"), (v) => v >= share);
      if (path.kind === "json") checks.add(`≥ ${TARGETS.timesPortkeyJson}× Portkey`, rps("modelmux") / rps("portkey"), (v) => v >= TARGETS.timesPortkeyJson);
      checks.add(`≤ ${TARGETS.cpuUs[path.kind]} µs`, cpuUs, (v) => v <= TARGETS.cpuUs[path.kind]);
      checks.add(`≤ ${TARGETS.peakMb} MB`, t.peakMb, (v) => v <= TARGETS.peakMb);
    }
    return {
      path: path.label,
      via,
      conns: "50",
      "req/s": rps(via).toFixed(0),
      p50: ms(at(50)),
      p99: ms(at(99)),
      errors: String(t.errors),
      RSS: mb(t.peakMb),
      "CPU/req": Number.isFinite(cpuUs) ? `${cpuUs.toFixed(0)} µs` : "",
      "vs direct": via === "direct" ? "" : ratio(rps(via) / rps("direct")),
      "vs node": via === "modelmux" ? ratio(rps("modelmux") / rps("node")) : "",
      "vs json": via === "modelmux" ? ratio(rps("modelmux") / rps("json")) : "",
      "vs Portkey": via === "modelmux" ? ratio(rps("modelmux") / rps("portkey")) : "",
      ...checks.cells(),
      ...(via === "before" && throughput.has("modelmux") && { note: `modelmux ÷ before: ${ratio(rps("modelmux") / rps("before"))} req/s; ${pairedCpu(throughput.get("modelmux")!, t)}` }),
    };
  });
}

/**
 * modelmux's CPU per request over `before`'s, round by round: each round runs both back to back
 * (in turn first), so the machine's drift hits a pair alike. The median of the differences, and
 * their range, which is the noise a change must stand out of.
 */
function pairedCpu(modelmux: ThroughputResult, before: ThroughputResult): string {
  const n = Math.min(modelmux.cpuUsPerRound.length, before.cpuUsPerRound.length);
  const diffs = Array.from({ length: n }, (_, i) => modelmux.cpuUsPerRound[i]! - before.cpuUsPerRound[i]!)
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
  if (diffs.length === 0) return "no rounds with replies on both";
  const m = diffs.length;
  const median = m % 2 ? diffs[(m - 1) / 2]! : (diffs[m / 2 - 1]! + diffs[m / 2]!) / 2;
  const signed = (v: number) => `${v >= 0 ? "+" : "−"}${Math.abs(v).toFixed(1)}`;
  return `CPU/req modelmux − before: median ${signed(median)} µs over ${m} rounds (range ${signed(diffs[0]!)} … ${signed(diffs[m - 1]!)})`;
}

/** The printed table: idle memory, then each path's rows, then the held streams. */
export function buildRows(results: PathResult[], extra: { idle: Record<string, number>; streams?: StreamsResult; notes: Record<string, string> }): Row[] {
  const rows: Row[] = [];
  for (const [via, rssMb] of Object.entries(extra.idle)) {
    const checks = new Checks();
    if (via === "modelmux") checks.add(`≤ ${TARGETS.idleMb} MB`, rssMb, (v) => v <= TARGETS.idleMb);
    rows.push({ path: "idle", via, RSS: mb(rssMb), ...checks.cells() });
  }
  for (const result of results) {
    rows.push(...latencyRows(result), ...throughputRows(result));
    for (const [via, why] of Object.entries(result.unavailable)) rows.push({ path: result.path.label, via, note: why });
  }
  const s = extra.streams;
  if (s) {
    const checks = new Checks();
    checks.add(`≤ ${TARGETS.streamsMb} MB`, s.peakMb, (v) => v <= TARGETS.streamsMb);
    checks.add("0 errors", s.errors + (s.count - s.opened), (v) => v === 0);
    rows.push({
      path: `${s.count.toLocaleString("en")} open streams`,
      via: "modelmux",
      conns: String(s.count),
      errors: String(s.errors),
      RSS: mb(s.peakMb),
      ...checks.cells(),
      note: `${s.opened} opened at once${s.timedOut ? " (timed out waiting for the rest)" : ""}; RSS ${mb(s.rssMb)} while open`,
    });
  }
  return rows.map((row) => ({ path: "", via: "", conns: "", "req/s": "", p50: "", p99: "", "first byte": "", errors: "", RSS: "", "CPU/req": "", "vs direct": "", "vs node": "", "vs json": "", "vs Portkey": "", target: "", result: "", note: "", ...row }));
}
