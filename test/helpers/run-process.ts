/**
 * A `node` child process for the CLI's tests, with its output collected and a way to wait for a
 * line on stderr; it is killed if it outlives `timeLimitMs`.
 */
import { spawn, type ChildProcess } from "node:child_process";

export interface RunningProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the first match of `pattern` in stderr; rejects if the process exits first. */
  waitForStderr(pattern: RegExp): Promise<RegExpMatchArray>;
}

export interface RunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeLimitMs: number;
}

/** Starts `node <args>`. */
export function startNode(args: string[], { cwd, env, timeLimitMs }: RunOptions): RunningProcess {
  const child = spawn(process.execPath, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  const listeners = new Set<() => void>();
  child.stdout!.setEncoding("utf8").on("data", (text: string) => (stdout += text));
  child.stderr!.setEncoding("utf8").on("data", (text: string) => {
    stderr += text;
    for (const listener of listeners) listener();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("close", (code, signal) => resolve({ code, signal })),
  );
  const timer = setTimeout(() => child.kill("SIGKILL"), timeLimitMs);
  void exited.then(() => clearTimeout(timer));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    waitForStderr(pattern) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = stderr.match(pattern);
          if (!match) return;
          listeners.delete(check);
          resolve(match);
        };
        listeners.add(check);
        void exited.then(() => {
          listeners.delete(check);
          reject(new Error(`the process exited before printing ${pattern}; stderr:\n${stderr}`));
        });
        check();
      });
    },
  };
}
