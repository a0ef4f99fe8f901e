/**
 * `modelmux serve` in a child process with a config written for the test: the router in its own
 * process and event loop, as clients meet it (timings between a client and the server, a signal).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ModelmuxConfig } from "@modelmux/core";
import { startNode, type RunningProcess } from "./run-process.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = "core/bin/modelmux.mjs";

export interface ServedChild extends RunningProcess {
  url: string;
  port: number;
  /** Access-log lines so far (pretty format: `… INFO  POST /v1/chat/completions status=413 …`). */
  accessLines(): string[];
  /** Kills the process if it still runs, and removes its config. */
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

/**
 * Starts `modelmux serve` on a free port of 127.0.0.1 with `config` (written as JSON, which YAML
 * reads), and resolves once it serves. Killed after `timeLimitMs` at the latest.
 */
export async function serveChild(config: ModelmuxConfig, timeLimitMs = 60_000): Promise<ServedChild> {
  const dir = mkdtempSync(join(tmpdir(), "modelmux-serve-"));
  const file = join(dir, "modelmux.yaml");
  writeFileSync(file, JSON.stringify({ ...config, server: { ...config.server, host: "127.0.0.1", port: 0 } }));
  const running = startNode([BIN, "serve", "--config", file], { cwd: ROOT, env: cleanEnv(), timeLimitMs });
  const dispose = () => {
    if (running.child.exitCode === null && running.child.signalCode === null) running.child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
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
