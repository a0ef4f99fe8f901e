/**
 * Compares two V8 CPU profiles of routers that served the same load (BENCH_CPU_PROF=1 with
 * BENCH_BEFORE_ROOT): each function's self time as a share of the process's busy time, times the
 * CPU per request each measured, so the difference reads in µs per request. Functions match by
 * name and file (lines move between versions); a file's total is given too.
 *   npx tsx bench/proxy/profile-compare.ts <after.cpuprofile> <µs per request> <before.cpuprofile> <µs per request> [top]
 */
import { readFileSync } from "node:fs";

interface CpuNode {
  id: number;
  callFrame: { functionName: string; url: string };
}
interface CpuProfile {
  nodes: CpuNode[];
  samples: number[];
  timeDeltas: number[];
}

const [afterFile, afterUs, beforeFile, beforeUs, topArg] = process.argv.slice(2);
if (!afterFile || !afterUs || !beforeFile || !beforeUs) {
  console.error("usage: npx tsx bench/proxy/profile-compare.ts <after.cpuprofile> <µs/request> <before.cpuprofile> <µs/request> [top]");
  process.exit(2);
}
const TOP = Number(topArg ?? 40);
const NOT_BUSY = new Set(["(idle)", "(program)"]);

function fileOf(url: string): string {
  const path = url.replace(/^file:\/\//, "");
  const nm = path.lastIndexOf("node_modules/");
  if (nm >= 0) return path.slice(nm + "node_modules/".length);
  // A build's chunks are named by their hash, which changes with their text: one name for all.
  return path.replace(/^.*\/(core|plugins)\//, "$1/").replace(/\/chunks\/chunk-[A-Z0-9]+\.js$/, "/chunks");
}

/** µs per request of each function (`name file`) and of each file. */
function perRequest(file: string, usPerRequest: number): { functions: Map<string, number>; files: Map<string, number> } {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<number, number>();
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id)!;
    if (NOT_BUSY.has(node.callFrame.functionName)) return;
    const dt = profile.timeDeltas[i] ?? 0;
    busy += dt;
    self.set(id, (self.get(id) ?? 0) + dt);
  });
  const functions = new Map<string, number>();
  const files = new Map<string, number>();
  for (const [id, time] of self) {
    const { functionName, url } = byId.get(id)!.callFrame;
    const where = fileOf(url) || "(native)";
    const us = (time / busy) * usPerRequest;
    const key = `${functionName || "(anonymous)"} ${where}`;
    functions.set(key, (functions.get(key) ?? 0) + us);
    files.set(where, (files.get(where) ?? 0) + us);
  }
  return { functions, files };
}

const after = perRequest(afterFile, Number(afterUs));
const before = perRequest(beforeFile, Number(beforeUs));

function table(title: string, a: Map<string, number>, b: Map<string, number>): void {
  const keys = new Set([...a.keys(), ...b.keys()]);
  const rows = [...keys].map((key) => ({ key, after: a.get(key) ?? 0, before: b.get(key) ?? 0 })).map((row) => ({ ...row, diff: row.after - row.before }));
  rows.sort((x, y) => Math.abs(y.diff) - Math.abs(x.diff));
  console.log(`\n${title} (µs per request: after, before, difference)`);
  for (const row of rows.slice(0, TOP)) console.log(`${row.after.toFixed(2).padStart(7)} ${row.before.toFixed(2).padStart(7)} ${(row.diff >= 0 ? "+" : "") + row.diff.toFixed(2)}`.padEnd(26) + row.key);
}

table("By file", after.files, before.files);
table("By function", after.functions, before.functions);
