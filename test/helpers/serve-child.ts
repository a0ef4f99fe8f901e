/**
 * The `modelmux` bin in a child process, as users run it: a command (`check`, `--version`…) run to
 * its end, or `modelmux serve` on a free port of 127.0.0.1, the router in its own process and event
 * loop as clients meet it (timings between a client and the server, a signal).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ModelmuxConfig } from "@modelmux/core";
import { startNode, type RunningProcess } from "./run-process.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = "core/bin/modelmux.mjs";

export interface CliOptions {
  /** The child's environment; `cleanEnv()` by default. */
  env?: NodeJS.ProcessEnv;
  /** The child is killed after this long at the latest. */
  timeLimitMs?: number;
}

export interface ServedChild extends RunningProcess {
  url: string;
  port: number;
  /** Access-log lines so far (pretty format: `… INFO  POST /v1/chat/completions status=413 …`). */
  accessLines(): string[];
  /** Kills the process if it still runs, and removes the config written for it. */
  dispose(): void;
}

/** The test process's environment without anything that changes what a config does. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) {
    if (name.startsWith("MODELMUX_") || name.startsWith("OPENAI_")) delete env[name];
  }
  return { ...env, ...extra };
}

/** Starts `modelmux <args>` from the repository's root. */
export function startCli(args: string[], { env = cleanEnv(), timeLimitMs = 60_000 }: CliOptions = {}): RunningProcess {
  return startNode([BIN, ...args], { cwd: ROOT, env, timeLimitMs });
}

/**
 * Starts `modelmux serve --host 127.0.0.1 --port 0 <args>` and resolves once it serves, with the URL
 * from its `serving http://…` line.
 */
export async function serveCli(args: string[], options: CliOptions = {}, cleanup?: () => void): Promise<ServedChild> {
  const running = startCli(["serve", "--host", "127.0.0.1", "--port", "0", ...args], options);
  const dispose = () => {
    if (running.child.exitCode === null && running.child.signalCode === null) running.child.kill("SIGKILL");
    cleanup?.();
  };
  try {
    const [, url] = await running.waitForStderr(/serving (http:\/\/127\.0\.0\.1:\d+)/);
    const accessLines = () => running.stderr().split("\n").filter((line) => /INFO {2}(GET|POST|HEAD) \S+ status=/.test(line));
    return { ...running, url: url!, port: Number(new URL(url!).port), accessLines, dispose };
  } catch (error) {
    dispose();
    throw error;
  }
}

/**
 * Starts `modelmux serve` with `config` (written as JSON, which YAML reads) on a free port of
 * 127.0.0.1, and resolves once it serves. Killed after `timeLimitMs` at the latest.
 */
export function serveChild(config: ModelmuxConfig, timeLimitMs = 60_000): Promise<ServedChild> {
  const dir = mkdtempSync(join(tmpdir(), "modelmux-serve-"));
  const file = join(dir, "modelmux.yaml");
  writeFileSync(file, JSON.stringify(config));
  return serveCli(["--config", file], { timeLimitMs }, () => rmSync(dir, { recursive: true, force: true }));
}
