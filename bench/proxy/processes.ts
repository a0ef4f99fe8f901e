/**
 * The processes of the proxy benchmark: each server (fake upstream, modelmux, Portkey's gateway) in
 * its own child process, so it has its own event loop and its own memory and CPU figures, read
 * from /proc/<pid> (Linux): CPU time from `stat` (utime + stime), RSS and its peak (`VmHWM`, reset
 * between loads through `clear_refs`) from `status`. Output goes to a log file per process under
 * `bench/results/logs/` (git-ignored), shown when a process fails to start.
 */
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

const LOGS = fileURLToPath(new URL("../results/logs/", import.meta.url));
const CLOCK_TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/** CPU and memory of one process at one moment. */
export interface ProcessSample {
  /** User + system CPU time since the process started, ms (10 ms resolution). */
  cpuMs: number;
  rssMb: number;
  /** Peak RSS since start or since the last `resetPeak()`. */
  peakMb: number;
}

export interface BenchProcess {
  name: string;
  pid: number;
  /** `http://127.0.0.1:<port>` */
  url: string;
  logFile: string;
  sample(): ProcessSample;
  /** Starts a new peak-RSS window (`echo 5 > /proc/<pid>/clear_refs`). */
  resetPeak(): void;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<ChildProcess>();
// A crashed run must not leave servers behind.
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

function readSample(pid: number): ProcessSample {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name, which is in parentheses and may contain spaces.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
  return { cpuMs: (ticks * 1000) / CLOCK_TICKS, rssMb: kb("VmRSS") / 1024, peakMb: kb("VmHWM") / 1024 };
}

/** A port that was free a moment ago, on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * BENCH_PIN=1: each process on a fixed CPU (`taskset`), the routers on one, the load generator and
 * the upstream on the other. Left to the scheduler, a router shares a core with the load generator
 * in some runs and not in others, and its CPU per request moves by 20–40 µs from one run to the
 * next with it; pinned, two routers compare on equal terms (their throughput is then not the
 * machine's best).
 */
export const PINNED = process.env.BENCH_PIN === "1";
/** The CPU of the routers when pinned; every other process has CPU 0. */
export const ROUTER_CPU = "1";
export const OTHER_CPU = "0";

/** Pins this process (every thread of it) to `OTHER_CPU` when BENCH_PIN=1. */
export function pinSelf(): void {
  if (PINNED) execFileSync("taskset", ["-a", "-p", "-c", OTHER_CPU, String(process.pid)], { stdio: "ignore" });
}

export interface StartOptions {
  name: string;
  /** With BENCH_PIN=1, the CPU list the process runs on (`taskset -c`). */
  cpus?: string;
  /** Arguments to `node`. */
  args: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Where stdout goes: to the log file (default), or a pipe that `ready` reads. */
  stdout?: "log" | "pipe";
  /** Resolves with the server's URL once it answers; `exited` rejects if the process dies first. */
  ready(child: ChildProcess, exited: Promise<never>): Promise<string>;
}

/** Starts `node <args>` and waits until `ready` says it serves. */
export async function startProcess(options: StartOptions): Promise<BenchProcess> {
  mkdirSync(LOGS, { recursive: true });
  const logFile = `${LOGS}${options.name}.log`;
  const log = openSync(logFile, "w");
  // `taskset` execs node in its own process: the child's pid is node's.
  const [command, args] = PINNED && options.cpus ? ["taskset", ["-c", options.cpus, process.execPath, ...options.args]] : [process.execPath, options.args];
  const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ["ignore", options.stdout === "pipe" ? "pipe" : log, log] });
  closeSync(log);
  running.add(child);
  const exit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  void exit.then(() => running.delete(child));
  const exited = exit.then((code): never => {
    throw new Error(`${options.name} exited (code ${code}) before it served; see ${logFile}:\n${tail(logFile)}`);
  });
  exited.catch(() => {});
  const url = await Promise.race([options.ready(child, exited), exited, timeout(60_000, `${options.name} did not start within 60 s; see ${logFile}`)]);
  const pid = child.pid!;
  return {
    name: options.name,
    pid,
    url,
    logFile,
    sample: () => readSample(pid),
    resetPeak: () => writeFileSync(`/proc/${pid}/clear_refs`, "5"),
    async stop(graceMs = 20_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exit;
      clearTimeout(killer);
    },
  };
}

function timeout(ms: number, message: string): Promise<never> {
  return new Promise((_, reject) => setTimeout(() => reject(new Error(message)), ms).unref());
}

function tail(file: string): string {
  try {
    return readFileSync(file, "utf8").split("\n").slice(-20).join("\n");
  } catch {
    return "";
  }
}

/** The first line the child prints on stdout, parsed as JSON. */
export function firstJsonLine<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    let text = "";
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", function onData(part: string) {
      text += part;
      const end = text.indexOf("\n");
      if (end < 0) return;
      child.stdout!.off("data", onData);
      child.stdout!.resume(); // whatever follows is not read
      try {
        resolve(JSON.parse(text.slice(0, end)) as T);
      } catch (error) {
        reject(error);
      }
    });
  });
}

/** Polls `url` until it answers 200 (every 100 ms). */
export async function waitForHttp(url: string, exited: Promise<never>): Promise<void> {
  let failed = false;
  void exited.catch(() => (failed = true));
  while (!failed) {
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await exited;
}
