import { connect, createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG_PATH } from "../core/src/config/load-config.ts";
import { cleanEnv, serveCli, startCli } from "./helpers/serve-child.ts";

const CONFIGS = fileURLToPath(new URL("./fixtures/configs/", import.meta.url));
const TIME_LIMIT_MS = 12_000;

const disposals: Array<() => void> = [];
afterEach(() => {
  for (const dispose of disposals.splice(0)) dispose();
});

async function run(args: string[], env?: NodeJS.ProcessEnv) {
  const running = startCli(args, { env, timeLimitMs: TIME_LIMIT_MS });
  const { code } = await running.exited;
  return { code, stdout: running.stdout(), stderr: running.stderr() };
}

/** Starts `serve` and returns it with the URL from its `serving http://…` log line. */
async function serve(args: string[], env?: NodeJS.ProcessEnv) {
  const server = await serveCli(args, { env, timeLimitMs: TIME_LIMIT_MS });
  disposals.push(server.dispose);
  return server;
}

/** Resolves with the error code of a TCP connection attempt, or "connected". */
function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve("connected");
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

// After a source change the bin's first run compiles dist/ and says so on stderr: let that run be
// this one, so that the exact stderr expected below is that of a run on a fresh dist/.
beforeAll(async () => {
  await run(["--version"]);
}, 60_000);

describe("modelmux check", () => {
  it("validates the default config and prints its models", async () => {
    const { code, stdout } = await run(["check"]);
    expect(code).toBe(0);
    expect(stdout).toBe(`[modelmux] ${DEFAULT_CONFIG_PATH} is valid: 1 model(s): echo/echo-1\n`);
  });

  it("reads MODELMUX_CONFIG when --config is not given, resolving ./ plugins from the file's folder", async () => {
    const { code, stdout, stderr } = await run(["check"], cleanEnv({ MODELMUX_CONFIG: "test/fixtures/configs/local-plugin.yaml" }));
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toBe(`[modelmux] ${CONFIGS}local-plugin.yaml is valid: 1 model(s): local/reporter-1\n`);
  });

  it("prefers --config over MODELMUX_CONFIG", async () => {
    const env = cleanEnv({ MODELMUX_CONFIG: "test/fixtures/configs/broken-port.yaml" });
    const { code, stdout } = await run(["check", "--config", "test/fixtures/configs/local-plugin.yaml"], env);
    expect(code).toBe(0);
    expect(stdout).toContain("local/reporter-1");
  });

  it("exits 1 on a schema error with '[modelmux] <file>: <field path>: …' on stderr", async () => {
    const { code, stdout, stderr } = await run(["check", "--config", "test/fixtures/configs/broken-port.yaml"]);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toBe(`[modelmux] ${CONFIGS}broken-port.yaml: server.port: must be <= 65535\n`);
  });

  it("exits 1 on a storage plugin written for the contract before owners, with one line saying what changed and what to do", async () => {
    const { code, stdout, stderr } = await run(["check", "--config", "test/fixtures/configs/pre-owner-storage.yaml"]);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    const [line, ...rest] = stderr.split("\n");
    expect(rest).toEqual([""]);
    const start = `[modelmux] ${CONFIGS}pre-owner-storage.yaml: [storage:pre-owner] this storage plugin is written for the storage contract before owners`;
    expect(line!.slice(0, start.length)).toBe(start);
    expect(line).toContain("getCompletion, updateMetadata and deleteCompletion");
    expect(line).toContain("add `contract: 2` to its definition");
  });

  it("exits 1 when a plugin option is refused, naming the option's path", async () => {
    const { code, stderr } = await run(["check", "--config", "test/fixtures/configs/bad-plugin-option.yaml"]);
    expect(code).toBe(1);
    expect(stderr).toBe(`[modelmux] ${CONFIGS}bad-plugin-option.yaml: providers.openai.base_ur: is not a known field; did you mean base_url?\n`);
  });

  it("exits 1 on a fallback naming a model the config does not have, naming its path and the fix", async () => {
    const { code, stdout, stderr } = await run(["check", "--config", "test/fixtures/configs/bad-fallback.yaml"]);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toBe(
      `[modelmux] ${CONFIGS}bad-fallback.yaml: fallbacks["echo/echo-1"][1]: 'echo/echo-3' is not a configured model ` +
        `(name one of providers.<name>.models as 'provider/model', or a plain alias of one)\n`,
    );
  });

  it("takes an environment value literally, even one that contains ${…}", async () => {
    const { code, stdout } = await run(["check"], cleanEnv({ MODELMUX_API_KEY: "sk-${NOT_A_VARIABLE}" }));
    expect(code).toBe(0);
    expect(stdout).toContain("is valid");
  });

  it("exits 1 on a config file that does not exist", async () => {
    const { code, stderr } = await run(["check", "--config", "test/fixtures/configs/missing.yaml"]);
    expect(code).toBe(1);
    expect(stderr).toBe(`[modelmux] cannot read config file ${CONFIGS}missing.yaml (ENOENT)\n`);
  });
});

describe("modelmux serve", () => {
  it("answers /healthz, prints a generated key once, accepts it, and stops on SIGTERM with exit 0", async () => {
    const server = await serve([]);
    const [, key] = await server.waitForStderr(/\n {4}(sk-modelmux-[A-Za-z0-9_-]+)\n/);

    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });

    const models = await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    expect(models.status).toBe(200);
    expect(((await models.json()) as { data: Array<{ id: string }> }).data.map((m) => m.id)).toEqual(["echo/echo-1", "echo"]);
    expect((await fetch(`${server.url}/v1/models`)).status).toBe(401);
    expect((await fetch(`${server.url}/v1/models`, { headers: { authorization: "Bearer sk-modelmux-guess" } })).status).toBe(401);

    server.child.kill("SIGTERM");
    expect(await server.exited).toEqual({ code: 0, signal: null });
    const stderr = server.stderr();
    expect(stderr.split(key!).length - 1).toBe(1);
    expect(server.stdout()).not.toContain(key);
    const keyLine = stderr.split("\n").find((line) => line.includes(key!));
    expect(keyLine).toBe(`    ${key}`);
    expect(stderr).toContain("No API key was configured (MODELMUX_API_KEY is unset), so one was generated for this run:");
    expect(stderr).toMatch(/INFO {2}models: echo\/echo-1\n/);
  });

  it("uses MODELMUX_API_KEY and prints no generated key when it is set", async () => {
    const server = await serve([], cleanEnv({ MODELMUX_API_KEY: "sk-chosen-by-test" }));
    const ok = await fetch(`${server.url}/v1/models`, { headers: { authorization: "Bearer sk-chosen-by-test" } });
    expect(ok.status).toBe(200);
    server.child.kill("SIGTERM");
    expect((await server.exited).code).toBe(0);
    expect(server.stderr()).not.toContain("sk-modelmux-");
    expect(server.stderr()).not.toContain("sk-chosen-by-test");
  });

  it("on SIGTERM refuses new connections, finishes an in-flight stream, then exits 0", async () => {
    const key = "sk-slow-stream-test";
    const server = await serve(["--config", "test/fixtures/configs/slow-echo.yaml"], cleanEnv({ MODELMUX_API_KEY: key }));
    const port = Number(new URL(server.url).port);
    const text = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"; // 20 chunks of 2, 50 ms apart: about 1 s
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "echo/echo-1", stream: true, messages: [{ role: "user", content: text }] }),
    });
    expect(response.status).toBe(200);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let body = (await reader.read()).value ?? "";
    expect(body).not.toContain("[DONE]");

    const signalledAt = Date.now();
    server.child.kill("SIGTERM");
    await server.waitForStderr(/SIGTERM: stopping/);
    expect(await tryConnect(port)).toBe("ECONNREFUSED");

    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) body += chunk.value;
    expect(Date.now() - signalledAt).toBeGreaterThan(300);
    expect(body.endsWith("data: [DONE]\n\n")).toBe(true);
    const content = body
      .split("\n\n")
      .filter((frame) => frame.startsWith("data: {"))
      .map((frame) => (JSON.parse(frame.slice(6)) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? "")
      .join("");
    expect(content).toBe(text);
    expect(await server.exited).toEqual({ code: 0, signal: null });
  });

  it("stops on SIGINT with exit 0", async () => {
    const server = await serve([], cleanEnv({ MODELMUX_API_KEY: "sk-sigint-test" }));
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    server.child.kill("SIGINT");
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.stderr()).toContain("SIGINT: stopping");
  });

  it("exits 1 with one line naming the address and --port when the port is in use", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const { port } = taken.address() as { port: number };
    try {
      const args = ["serve", "--config", "test/fixtures/configs/slow-echo.yaml", "--host", "127.0.0.1", "--port", String(port)];
      const { code, stderr } = await run(args, cleanEnv({ MODELMUX_API_KEY: "sk-port-test" }));
      expect(stderr).toBe(`[modelmux] cannot listen on 127.0.0.1:${port}: the port is already in use; pick another with --port (or server.port)\n`);
      expect(code).toBe(1);
    } finally {
      taken.close();
    }
  });

  it("exits 1 without serving when the config is broken", async () => {
    const { code, stderr } = await run(["serve", "--port", "0", "--config", "test/fixtures/configs/broken-port.yaml"]);
    expect(code).toBe(1);
    expect(stderr).toBe(`[modelmux] ${CONFIGS}broken-port.yaml: server.port: must be <= 65535\n`);
  });
});
