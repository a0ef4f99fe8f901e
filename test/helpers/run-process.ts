/**
 * A `node` child process for the CLI's tests (or another command, such as `npx`), with its output
 * collected and a way to wait for a line on stderr; it is killed if it outlives `timeLimitMs`.
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
export function startNode(args: string[], options: RunOptions): RunningProcess {
  return startCommand(process.execPath, args, options);
}

/**
 * Starts `command <args>`. With `group`, it leads a process group of its own, and the time limit
 * kills the whole group: a command such as `npx` runs the program in a child of its own.
 */
export function startCommand(command: string, args: string[], { cwd, env, timeLimitMs, group = false }: RunOptions & { group?: boolean }): RunningProcess {
  const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: group });
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
  const timer = setTimeout(() => (group ? signalGroup(child, "SIGKILL") : child.kill("SIGKILL")), timeLimitMs);
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

/** Sends `signal` to the process group that `child` leads (started with `group`), if it still runs. */
export function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}
