/**
 * Reads a V8 profile and prints where the time or the memory went:
 *   npx tsx bench/proxy/profile-summary.ts bench/results/profiles/CPU.….cpuprofile [top]
 *   npx tsx bench/proxy/profile-summary.ts bench/results/profiles/modelmux-….heapprofile [top]
 *   npx tsx bench/proxy/profile-summary.ts <file> [top] <regex>
 * For a CPU profile: the top functions by self time, self time by package or file, and the top
 * functions by total (inclusive) time. For a heap profile (sampled allocations): the same by bytes.
 * With a regex, only the stacks through functions matching it, by the caller of the match (who
 * calls the hot function, and how much its calls cost).
 */
import { readFileSync } from "node:fs";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface CpuNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: CpuNode[];
  samples: number[];
  timeDeltas: number[];
}
interface HeapNode {
  callFrame: CallFrame;
  selfSize: number;
  children: HeapNode[];
}

const [file, topArg, focus] = process.argv.slice(2);
const FOCUS = focus ? new RegExp(focus) : undefined;
if (!file) {
  console.error("usage: npx tsx bench/proxy/profile-summary.ts <file.cpuprofile|file.heapprofile> [top]");
  process.exit(2);
}
const TOP = Number(topArg ?? 30);

/** `name (file:line)`, the path shortened to what follows node_modules/ or the repository. */
function where(frame: CallFrame): string {
  return `${frame.functionName || "(anonymous)"} ${shortUrl(frame.url)}${frame.url ? `:${frame.lineNumber + 1}` : ""}`;
}
function shortUrl(url: string): string {
  const path = url.replace(/^file:\/\//, "");
  const nm = path.lastIndexOf("node_modules/");
  if (nm >= 0) return path.slice(nm + "node_modules/".length);
  return path.replace(/^.*\/work\/[^/]+\//, "");
}
/** The package (`h3`, `undici`, `@modelmux/core` files by folder) or `node:` module a frame is in. */
function owner(frame: CallFrame): string {
  if (!frame.url) return frame.functionName.startsWith("(") ? frame.functionName : "(native)";
  const path = shortUrl(frame.url);
  if (frame.url.startsWith("node:")) return frame.url;
  if (frame.url.includes("node_modules/")) return path.startsWith("@") ? path.split("/").slice(0, 2).join("/") : path.split("/")[0]!;
  return path;
}

function table(title: string, entries: Map<string, number>, total: number, unit: (v: number) => string): void {
  console.log(`\n${title}`);
  for (const [key, value] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, TOP)) {
    console.log(`${((value / total) * 100).toFixed(1).padStart(5)}%  ${unit(value).padStart(10)}  ${key}`);
  }
}
const add = (map: Map<string, number>, key: string, value: number) => map.set(key, (map.get(key) ?? 0) + value);

if (file.endsWith(".cpuprofile")) {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const bySelf = new Map<string, number>();
  const byOwner = new Map<string, number>();
  for (const [id, us] of self) {
    const frame = byId.get(id)!.callFrame;
    add(bySelf, where(frame), us);
    add(byOwner, owner(frame), us);
  }
  // Inclusive time: each function counted once per stack, however deep it recurses.
  const inclusive = new Map<string, number>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  for (const [id, us] of self) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const key = where(byId.get(at)!.callFrame);
      if (!seen.has(key)) add(inclusive, key, us);
      seen.add(key);
    }
  }
  const ms = (us: number) => `${(us / 1000).toFixed(0)} ms`;
  if (FOCUS) {
    // Per match: the time under it, keyed by its caller chain (3 frames up).
    const callers = new Map<string, number>();
    for (const [id, us] of self) {
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const key = where(byId.get(at)!.callFrame);
        if (!FOCUS.test(key)) continue;
        const chain: string[] = [];
        for (let up = parent.get(at); up !== undefined && chain.length < Number(process.env.CHAIN ?? 3); up = parent.get(up)) chain.push(where(byId.get(up)!.callFrame));
        add(callers, `${key}  <-  ${chain.join("  <-  ")}`, us);
        break;
      }
    }
    table(`Time under /${focus}/, by caller`, callers, total, ms);
    process.exit(0);
  }
  console.log(`${file}: ${(total / 1e6).toFixed(2)} s sampled`);
  table("Self time by function", bySelf, total, ms);
  table("Self time by package or file", byOwner, total, ms);
  table("Total time by function", inclusive, total, ms);
} else {
  const profile = JSON.parse(readFileSync(file, "utf8")) as { head: HeapNode };
  const bySelf = new Map<string, number>();
  const byOwner = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  const walk = (node: HeapNode, stack: string[]) => {
    const key = where(node.callFrame);
    const path = [...stack, key];
    if (node.selfSize > 0) {
      total += node.selfSize;
      add(bySelf, key, node.selfSize);
      add(byOwner, owner(node.callFrame), node.selfSize);
      for (const frame of new Set(path)) add(inclusive, frame, node.selfSize);
    }
    for (const child of node.children) walk(child, path);
  };
  walk(profile.head, []);
  const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;
  console.log(`${file}: ${mb(total)} sampled allocations`);
  table("Allocated by function (self)", bySelf, total, mb);
  table("Allocated by package or file", byOwner, total, mb);
  table("Allocated under function (total)", inclusive, total, mb);
}
