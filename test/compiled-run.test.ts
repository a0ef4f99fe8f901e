/**
 * The bin runs the compiled `dist/` with plain node, keeps it fresh by itself, and still runs when
 * it cannot compile. Every test works on its own copy of the checkout, so that building, breaking
 * and deleting `dist/` here never races the other test files that run the real bin.
 */
import { appendFileSync, chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { copyCheckout, type CheckoutCopy } from "./helpers/checkout-copy.ts";
import { startNode } from "./helpers/run-process.ts";
import { REFUSER_PLUGIN } from "./fixtures/refuser-plugin.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const REPORTER = fileURLToPath(new URL("./fixtures/process-report.mjs", import.meta.url));
const COMPILED = /^\[modelmux\] (dist\/ was missing|the sources changed): compiled \d+ packages into dist\/ in \d+ ms$/m;
const FALLBACK = /^\[modelmux\] cannot compile dist\/ \((.+)\): running the TypeScript sources through tsx$/m;
const TIME_LIMIT_MS = 20_000;


let copy: CheckoutCopy;
beforeAll(() => {
  copy = copyCheckout(ROOT);
});
afterAll(() => copy?.remove());

/** What `process-report.mjs` saw in the process. */
interface ProcessReport {
  moduleHooks: boolean;
  execArgv: string[];
}

interface Started {
  pid: number;
  stderr: () => string;
  waitForStderr(pattern: RegExp): Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; stdout: string; stderr: string; report: ProcessReport }>;
  kill(signal: NodeJS.Signals): void;
}

function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) {
    if (name.startsWith("MODELMUX_") || name.startsWith("OPENAI_") || name === "NODE_OPTIONS") delete env[name];
  }
  return env;
}

/** Runs the copy's bin, with `process-report.mjs` preloaded; its report is taken out of stderr. */
function startBin(args: string[]): Started {
  const running = startNode(["--import", REPORTER, join(copy.dir, "core/bin/modelmux.mjs"), ...args], { cwd: copy.dir, env: cleanEnv(), timeLimitMs: TIME_LIMIT_MS });
  const exited = running.exited.then(({ code }) => {
    const stderr = running.stderr();
    const line = /^process-report (.*)\n/m.exec(stderr);
    const report = JSON.parse(line?.[1] ?? "null") as ProcessReport;
    return { code, stdout: running.stdout(), stderr: stderr.replace(line?.[0] ?? "", ""), report };
  });
  return {
    pid: running.child.pid!,
    stderr: running.stderr,
    exited,
    kill: (signal) => running.child.kill(signal),
    waitForStderr: running.waitForStderr,
  };
}

const runBin = (args: string[]) => startBin(args).exited;

/** The command lines of `pid`'s child processes (Linux: from /proc), e.g. an esbuild service left running. */
function childProcesses(pid: number): string[] {
  const children: string[] = [];
  for (const entry of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) children.push(readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ").trim());
    } catch {
      // The process ended while we looked.
    }
  }
  return children;
}

const inCopy = (path: string) => join(copy.dir, path);
const distDirs = () => [inCopy("core/dist"), ...readdirSync(inCopy("plugins")).map((name) => inCopy(`plugins/${name}/dist`))];
const coreChunks = () => readdirSync(inCopy("core/dist/chunks")).filter((name) => name.endsWith(".js"));

describe("the modelmux bin runs the compiled dist/", { timeout: 60_000 }, () => {
  it("compiles a missing dist/, then serves from it with plain node: no module hooks, no esbuild left running", async () => {
    expect(distDirs().some(existsSync)).toBe(false);
    const server = startBin(["serve", "--host", "127.0.0.1", "--port", "0"]);
    const [, url] = await server.waitForStderr(/serving (http:\/\/127\.0\.0\.1:\d+)/);
    expect(server.stderr()).toMatch(COMPILED);
    expect(server.stderr()).toMatch(/dist\/ was missing/);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    if (process.platform === "linux") expect(childProcesses(server.pid)).toEqual([]);

    server.kill("SIGTERM");
    const { code, report } = await server.exited;
    expect(code).toBe(0);
    expect(report).toEqual({ moduleHooks: false, execArgv: ["--import", REPORTER] });
    expect(distDirs().every(existsSync)).toBe(true);
  });

  it("starts without a word and without compiling when dist/ is fresh", async () => {
    const { code, stdout, stderr, report } = await runBin(["check"]);
    expect(code).toBe(0);
    expect(stdout).toContain("is valid: 1 model(s): echo/echo-1");
    expect(stderr).not.toContain("[modelmux]"); // only the default config's "provider … is off" lines
    expect(report.moduleHooks).toBe(false);
  });

  it("recompiles when a source changed, keeping the previous build's chunks for a server started from it", async () => {
    const chunksBefore = coreChunks();
    const loadConfig = inCopy("core/src/config/load-config.ts");
    writeFileSync(loadConfig, readFileSync(loadConfig, "utf8").replace("the config must be a YAML mapping", "the config must be a YAML mapping (edited)"));
    writeFileSync(inCopy("list.yaml"), "- not a mapping\n");

    const { code, stderr } = await runBin(["check", "--config", "list.yaml"]);
    expect(code).toBe(1);
    expect(stderr).toMatch(COMPILED);
    expect(stderr).toMatch(/the sources changed/);
    expect(stderr).toContain("the config must be a YAML mapping (edited)");
    expect(coreChunks()).toEqual(expect.arrayContaining(chunksBefore));
    expect(coreChunks().length).toBeGreaterThan(chunksBefore.length);

    const again = await runBin(["check", "--config", "list.yaml"]);
    expect(again.stderr).toBe(`[modelmux] ${inCopy("list.yaml")}: the config must be a YAML mapping (edited)\n`);
  });

  it("loads a TypeScript plugin named by ./path with no build step, registering tsx only for it", async () => {
    const { code, stdout, stderr, report } = await runBin(["check", "--config", "examples/provider-plugin/modelmux.example.yaml"]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toContain("is valid: 1 model(s): parrot/parrot-1");
    expect(report.moduleHooks).toBe(true);
  });

  it("gives a TypeScript plugin the compiled core itself: its ModelmuxError is the server's", async () => {
    mkdirSync(inCopy("ts-plugin"));
    writeFileSync(inCopy("ts-plugin/package.json"), `${JSON.stringify({ type: "module" })}\n`);
    writeFileSync(inCopy("ts-plugin/refuser.ts"), REFUSER_PLUGIN);
    writeFileSync(inCopy("ts-plugin/modelmux.yaml"), "auth: { api_keys: [{ key: sk-ts-plugin }] }\nproviders:\n  refuser: { plugin: ./refuser.ts, models: [m-1] }\n");
    const server = startBin(["serve", "--config", "ts-plugin/modelmux.yaml", "--host", "127.0.0.1", "--port", "0"]);
    const [, url] = await server.waitForStderr(/serving (http:\/\/127\.0\.0\.1:\d+)/);
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer sk-ts-plugin", "content-type": "application/json" },
      body: JSON.stringify({ model: "refuser/m-1", messages: [{ role: "user", content: "Hi" }] }),
    });
    // A second core would make this error a plain Error to the server: a masked 500.
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: { message: "refused by a TypeScript plugin", type: "invalid_request_error", code: "invalid_value", param: "messages" } });
    server.kill("SIGTERM");
    expect((await server.exited).code).toBe(0);
  });

  it("compiles once when several commands start at once on a missing dist/", async () => {
    for (const dir of distDirs()) rmSync(dir, { recursive: true, force: true });
    const runs = await Promise.all([1, 2, 3, 4].map(() => runBin(["--version"])));
    for (const run of runs) {
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    }
    expect(runs.filter((run) => COMPILED.test(run.stderr))).toHaveLength(1);
    expect(runs.filter((run) => run.stderr !== "")).toHaveLength(1);
  });

  it("runs the TypeScript sources through tsx when esbuild is missing", async () => {
    const esbuildLink = inCopy("node_modules/esbuild");
    const esbuild = fileURLToPath(new URL(".", import.meta.resolve("esbuild/package.json")));
    unlinkSync(esbuildLink);
    try {
      // No dist/ at all: every @modelmux/* import must resolve to src/ (the `modelmux-source` hook).
      for (const dir of distDirs()) rmSync(dir, { recursive: true, force: true });
      const echo = await runBin(["check"]);
      expect(echo.stderr).toMatch(FALLBACK);
      expect(FALLBACK.exec(echo.stderr)?.[1]).toContain("esbuild");
      expect(echo.code).toBe(0);
      expect(echo.stdout).toContain("is valid: 1 model(s): echo/echo-1");
      expect(echo.report.moduleHooks).toBe(true);

      // The path plugin's `@modelmux/core` resolves to the core's sources too.
      const parrot = await runBin(["check", "--config", "examples/provider-plugin/modelmux.example.yaml"]);
      expect(parrot.code).toBe(0);
      expect(parrot.stdout).toContain("1 model(s): parrot/parrot-1");
    } finally {
      symlinkSync(esbuild, esbuildLink, "junction");
    }
  });

  // Root writes to read-only folders anyway.
  it.skipIf(process.getuid?.() === 0)("runs the TypeScript sources through tsx when the checkout is read-only", async () => {
    appendFileSync(inCopy("core/src/index.ts"), "\n");
    const dirs = [inCopy("core"), ...readdirSync(inCopy("plugins")).map((name) => inCopy(`plugins/${name}`))];
    for (const dir of dirs) chmodSync(dir, 0o555);
    try {
      const { code, stdout, stderr } = await runBin(["check"]);
      expect(stderr).toMatch(FALLBACK);
      expect(code).toBe(0);
      expect(stdout).toContain("is valid");
    } finally {
      for (const dir of dirs) chmodSync(dir, 0o755);
    }
  });
});
