/**
 * The README's "Try it" works as written: its shell block, pasted as a script at the repository's
 * root, starts the router, waits for /healthz, lists the models, streams a completion and stops the
 * router; its TypeScript block, run with tsx against a running router, prints what its comments say.
 * Each runs on a free port (the README's 8080 replaced) with stored data kept in memory. The
 * `modelmux check` example of "Configuration" is the real output too.
 */
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { startCommand } from "./helpers/run-process.ts";
import { cleanEnv, serveCli, startCli } from "./helpers/serve-child.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const README = readFileSync(join(ROOT, "README.md"), "utf8");
const TIME_LIMIT_MS = 60_000;

/** The first ```<language> block of the README's "Try it" section. */
function tryItBlock(language: string): string {
  const section = README.slice(README.indexOf("\n## Try it\n"), README.indexOf("\n## ", README.indexOf("\n## Try it\n") + 1));
  const match = new RegExp("```" + language + "\\n([\\s\\S]*?)\\n```").exec(section);
  if (!match) throw new Error(`no ${language} block in the README's "Try it"`);
  return match[1]!;
}

/** The environment of a run: no provider keys, stored completions and images in memory. */
function env(extra: Record<string, string>): NodeJS.ProcessEnv {
  const clean = cleanEnv({ MODELMUX_STORAGE_DRIVER: "memory", ...extra });
  for (const name of ["ANTHROPIC_API_KEY", "GEMINI_API_KEY"]) delete clean[name];
  return clean;
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** The content of an SSE stream's chat chunks, joined. */
function streamedContent(sse: string): string {
  return sse
    .split("\n\n")
    .filter((frame) => frame.startsWith("data: {"))
    .map((frame) => (JSON.parse(frame.slice(6)) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? "")
    .join("");
}

// The first run of the bin after a source change compiles dist/ and says so on stderr: let it be this one.
beforeAll(async () => {
  await startCli(["--version"], { timeLimitMs: TIME_LIMIT_MS }).exited;
}, TIME_LIMIT_MS);

const disposals: Array<() => void> = [];
afterEach(() => {
  for (const dispose of disposals.splice(0)) dispose();
});

describe('README "Try it"', () => {
  it("the shell block, run as a script, serves, answers, and stops the router", { timeout: TIME_LIMIT_MS + 5_000 }, async () => {
    const script = tryItBlock("sh");
    expect(script).toMatch(/for i in \$\(seq \d+\); do curl -sf http:\/\/127\.0\.0\.1:8080\/healthz/); // a bounded wait
    const port = await freePort();
    const running = startCommand("sh", ["-c", script.replaceAll("127.0.0.1:8080", `127.0.0.1:${port}`)], {
      cwd: ROOT,
      env: env({ MODELMUX_PORT: String(port) }),
      timeLimitMs: TIME_LIMIT_MS,
      group: true,
    });
    const { code } = await running.exited;
    const [models, ...rest] = running.stdout().split("\n");
    expect(code, running.stderr()).toBe(0);
    expect((JSON.parse(models!) as { data: Array<{ id: string }> }).data.map((m) => m.id)).toEqual(["echo/echo-1", "echo"]);
    const stream = rest.join("\n");
    expect(streamedContent(stream)).toBe("Hello, router");
    expect(stream.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(running.stderr()).toContain(`serving http://127.0.0.1:${port}`);
    expect(running.stderr()).toContain("SIGTERM: stopping");
    expect(await connects(port)).toBe(false);
  });

  it("the TypeScript block, run with tsx, prints what its comments say", { timeout: TIME_LIMIT_MS + 5_000 }, async () => {
    const key = "sk-readme-try-it";
    const server = await serveCli([], { env: env({ MODELMUX_API_KEY: key }), timeLimitMs: TIME_LIMIT_MS });
    disposals.push(server.dispose);
    // In a folder of its own, finding `openai` and tsx through a link to the repository's node_modules.
    const dir = mkdtempSync(join(tmpdir(), "modelmux-readme-"));
    disposals.push(() => rmSync(dir, { recursive: true, force: true }));
    symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
    const program = tryItBlock("ts");
    expect(program).toContain('baseURL: "http://127.0.0.1:8080/v1"');
    writeFileSync(join(dir, "try.mts"), program.replaceAll("http://127.0.0.1:8080", server.url));

    const run = startCommand(join(ROOT, "node_modules", ".bin", "tsx"), ["try.mts"], { cwd: dir, env: env({ MODELMUX_API_KEY: key }), timeLimitMs: TIME_LIMIT_MS });
    const { code } = await run.exited;
    expect(code, run.stderr()).toBe(0);
    const lines = run.stdout().split("\n");
    expect(lines.slice(0, 3)).toEqual(["Hello, router", "Stream this", "Hello, responses"]);
    expect(lines[3]).toMatch(new RegExp(`^${server.url}/files/images/[\\w-]+\\.png$`));
    expect(lines.slice(4)).toEqual([""]);
    const image = await fetch(lines[3]!);
    expect(image.status).toBe(200);
    expect(image.headers.get("content-type")).toBe("image/png");
  });

  it("the `modelmux check` example of Configuration is what check prints", { timeout: TIME_LIMIT_MS + 5_000 }, async () => {
    const example = /validates a config and loads its plugins without serving\.[\s\S]*?\n```\n([\s\S]*?)\n```/.exec(README)![1]!;
    const file = join(ROOT, "test", "fixtures", "configs", "readme-check.yaml");
    const running = startCli(["check", "--config", file], { env: env({}), timeLimitMs: TIME_LIMIT_MS });
    const { code } = await running.exited;
    expect(code).toBe(1);
    expect(running.stderr().replaceAll(file, "/srv/modelmux.yaml")).toBe(`${example}\n`);
  });
});
