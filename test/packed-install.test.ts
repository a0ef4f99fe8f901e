/**
 * The packages as a user outside this repository gets them: `npm pack` of the core and of a few
 * plugins (each package's `prepack` builds its `dist/`), the tarballs installed into an empty
 * project in the system's temporary folder, and there: the core embedded (`createRouter`, then a
 * chat request through `router.fetch`), `modelmux serve` with stored completions on disk, a
 * TypeScript consumer type-checked against the shipped declarations, and a `.ts` plugin, which
 * needs tsx. The packing runs in a copy of the checkout, so its build never swaps the `dist/` that
 * other test files run. Installs take the third-party packages from npm's cache when it has them
 * (`--prefer-offline`), else from the registry.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { copyCheckout, type CheckoutCopy } from "./helpers/checkout-copy.ts";
import { signalGroup, startCommand } from "./helpers/run-process.ts";
import { REFUSER_PLUGIN } from "./fixtures/refuser-plugin.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const PACKED = ["core", "plugins/provider-echo", "plugins/provider-openai", "plugins/storage-unstorage"];
const KEY = "sk-packed-install";
/** Installs and a pack build (esbuild, then the declarations) on a shared 2-core machine. */
const SLOW_MS = 300_000;
const run = promisify(execFile);

/** The version the checkout itself installed, so that npm's cache has it. */
const installedVersion = (name: string) =>
  (JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")) as { version: string }).version;

/**
 * The test's environment without what would point npm at the repository (`npm test` exports its
 * `npm_config_local_prefix`, `npm_package_*`…) or change what a config does.
 */
function projectEnv(): NodeJS.ProcessEnv {
  const keep = new Set(["npm_config_cache", "npm_config_registry", "npm_config_userconfig", "npm_config_globalconfig"]);
  const env: NodeJS.ProcessEnv = { npm_config_update_notifier: "false", npm_config_fund: "false", npm_config_audit: "false" };
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(npm_|MODELMUX_|OPENAI_|ANTHROPIC_|GEMINI_)/.test(name) && !keep.has(name)) continue;
    if (name === "INIT_CWD" || name === "NODE_OPTIONS") continue;
    env[name] = value;
  }
  return env;
}

async function npm(args: string[], cwd: string): Promise<string> {
  const { stdout } = await run("npm", args, { cwd, env: projectEnv(), timeout: SLOW_MS, maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

/** `npx modelmux …` in the project, as its user runs it; npx runs the bin in a process of its own. */
function startModelmux(args: string[], timeLimitMs = 60_000) {
  return startCommand("npx", ["--no", "--", "modelmux", ...args], { cwd: project, env: projectEnv(), timeLimitMs, group: true });
}

async function modelmux(args: string[]) {
  const running = startModelmux(args);
  const { code } = await running.exited;
  return { code, stdout: running.stdout(), stderr: running.stderr() };
}

const chatRequest = (content: string, extra: Record<string, unknown> = {}) => ({
  method: "POST",
  headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
  body: JSON.stringify({ model: "echo/echo-1", messages: [{ role: "user", content }], ...extra }),
});

let copy: CheckoutCopy | undefined;
let scratch: string;
let project: string;

beforeAll(async () => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), "modelmux-packed-")));
  project = join(scratch, "project");
  const tarballs = join(scratch, "tarballs");
  mkdirSync(project);
  mkdirSync(tarballs);
  copy = copyCheckout(ROOT);
  await npm(["pack", ...PACKED.flatMap((dir) => ["--workspace", dir]), "--pack-destination", tarballs], copy.dir);
  const packed = readdirSync(tarballs).filter((name) => name.endsWith(".tgz"));
  expect(packed).toHaveLength(PACKED.length);
  copy.remove();
  copy = undefined;

  writeFileSync(join(project, "package.json"), `${JSON.stringify({ name: "packed-install-check", private: true, type: "module" }, null, 2)}\n`);
  await npm(
    ["install", "--prefer-offline", ...packed.map((name) => join(tarballs, name)), `@types/node@${installedVersion("@types/node")}`],
    project,
  );
}, SLOW_MS);

afterAll(() => {
  copy?.remove();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe("the packed packages, installed into an empty project outside the repository", { timeout: SLOW_MS }, () => {
  it("carry their compiled dist/, the core's schema and default config, and no sources or build tools", () => {
    const core = join(project, "node_modules/@modelmux/core");
    for (const file of ["dist/index.js", "dist/cli.js", "dist/testing.js", "dist/types/index.d.ts", "config/modelmux.schema.json", "config/modelmux.yaml", "bin/modelmux.mjs"]) {
      expect(existsSync(join(core, file)), file).toBe(true);
    }
    expect(existsSync(join(core, "src"))).toBe(false);
    expect(existsSync(join(core, "build"))).toBe(false);
    expect(existsSync(join(project, "node_modules/@modelmux/provider-echo/dist/index.js"))).toBe(true);
    // Build tools are the repository's devDependencies, and tsx is wanted only for a .ts plugin.
    for (const tool of ["esbuild", "tsx", "typescript"]) expect(existsSync(join(project, "node_modules", tool)), tool).toBe(false);
  });

  it("embed: createRouter, then a chat request through router.fetch", async () => {
    writeFileSync(
      join(project, "embed.mjs"),
      `import { createRouter } from "@modelmux/core";

const router = await createRouter({
  auth: { api_keys: [{ key: ${JSON.stringify(KEY)} }] },
  providers: { echo: { plugin: "provider-echo", models: ["echo-1"] } },
});
const response = await router.fetch(new Request("http://localhost/v1/chat/completions", ${JSON.stringify(chatRequest("Hello from a tarball"))}));
console.log(JSON.stringify({ core: import.meta.resolve("@modelmux/core"), status: response.status, body: await response.json() }));
await router.close();
`,
    );
    const { stdout } = await run(process.execPath, ["embed.mjs"], { cwd: project, env: projectEnv(), timeout: 60_000 });
    const { core, status, body } = JSON.parse(stdout.trim().split("\n").at(-1)!) as {
      core: string;
      status: number;
      body: { object: string; model: string; choices: Array<{ message: { content: string } }> };
    };
    expect(core).toBe(`file://${project}/node_modules/@modelmux/core/dist/index.js`);
    expect(status).toBe(200);
    expect(body.object).toBe("chat.completion");
    expect(body.choices[0]!.message.content).toContain("Hello from a tarball");
  });

  it("modelmux serve: a chat completion stored on disk with store: true, read back by its id", async () => {
    writeFileSync(
      join(project, "x.yaml"),
      [
        `auth: { api_keys: [{ key: ${KEY} }] }`,
        "storage: { plugin: storage-unstorage, options: { driver: fs, base: ./data } }",
        "providers:",
        "  echo: { plugin: provider-echo, models: [echo-1] }",
        "",
      ].join("\n"),
    );
    const server = startModelmux(["serve", "--config", "x.yaml", "--host", "127.0.0.1", "--port", "0"], 120_000);
    try {
      const [, url] = await server.waitForStderr(/serving (http:\/\/127\.0\.0\.1:\d+)/);
      const created = await fetch(`${url}/v1/chat/completions`, chatRequest("Keep this one", { store: true }));
      expect(created.status).toBe(200);
      const { id } = (await created.json()) as { id: string };
      const stored = await fetch(`${url}/v1/chat/completions/${id}`, { headers: { authorization: `Bearer ${KEY}` } });
      expect(stored.status).toBe(200);
      const body = (await stored.json()) as { id: string; choices: Array<{ message: { content: string } }> };
      expect(body.id).toBe(id);
      expect(body.choices[0]!.message.content).toContain("Keep this one");
      expect(readdirSync(join(project, "data"))).not.toEqual([]);
      // As a terminal's Ctrl-C does, to the whole group: npx does not hand a signal on to modelmux.
      signalGroup(server.child, "SIGTERM");
      await server.exited;
      expect(server.stderr()).toContain("SIGTERM: stopping");
    } finally {
      signalGroup(server.child, "SIGKILL");
    }
  });

  it("modelmux check and --version, with the default config the core carries", async () => {
    const version = await modelmux(["--version"]);
    expect(version).toMatchObject({ code: 0, stdout: `${installedVersion("@modelmux/core")}\n` });
    const check = await modelmux(["check"]);
    expect(check.stderr).not.toContain("[modelmux] dist");
    expect(check.code).toBe(0);
    expect(check.stdout).toBe(`[modelmux] ${project}/node_modules/@modelmux/core/config/modelmux.yaml is valid: 1 model(s): echo/echo-1\n`);
  });

  it("TypeScript: a consumer type-checks against the shipped declarations", async () => {
    writeFileSync(
      join(project, "tsconfig.json"),
      `${JSON.stringify({ compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, types: ["node"] }, files: ["consumer.ts"] }, null, 2)}\n`,
    );
    writeFileSync(
      join(project, "consumer.ts"),
      `import { createRouter, defineProvider, invalidRequest, type ModelmuxConfig, type Router } from "@modelmux/core";
import echo from "@modelmux/provider-echo";

// As the README's "Using the packages outside this repository" embeds it: the definition itself.
const config: ModelmuxConfig = { auth: { api_keys: [{ key: "sk-ts" }] }, providers: { echo: { plugin: "echo", models: ["echo-1"] } } };
const router: Router = await createRouter(config, { plugins: { echo } });
const response: Response = await router.fetch(new Request("http://localhost/v1/models"));
export const status: number = response.status;
export const echoName: string = echo.name;
const refuse = async (): Promise<never> => {
  throw invalidRequest("refused", { param: "messages" });
};
export const refuser = defineProvider({
  name: "refuser",
  optionsSchema: { type: "object" },
  setup: () => ({ capabilities: () => ({ chat: true }), chat: refuse, chatStream: refuse }),
});
// @ts-expect-error a config's providers are a map of provider blocks (this fails if the types were \`any\`)
export const wrong: ModelmuxConfig = { providers: 3 };
`,
    );
    const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
    const { stdout } = await run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: project, env: projectEnv(), timeout: 120_000 }).catch(
      (error: { stdout: string }) => error,
    );
    // Without skipLibCheck, so that our declarations are checked too; some third-party ones (h3's,
    // unstorage's drivers for services not installed) have errors of their own, which are not ours.
    const errors = stdout.split("\n").filter((line) => /: error TS\d+/.test(line));
    expect(errors.filter((line) => !line.startsWith("node_modules/") || line.startsWith("node_modules/@modelmux/"))).toEqual([]);
  });

  it("a .ts plugin: a clear error naming tsx while it is not installed, loaded once it is", async () => {
    mkdirSync(join(project, "ts-plugin"));
    writeFileSync(join(project, "ts-plugin/refuser.ts"), REFUSER_PLUGIN);
    writeFileSync(join(project, "ts-plugin/modelmux.yaml"), `auth: { api_keys: [{ key: ${KEY} }] }\nproviders:\n  refuser: { plugin: ./refuser.ts, models: [m-1] }\n`);
    const missing = await modelmux(["check", "--config", "ts-plugin/modelmux.yaml"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(
      `[modelmux] ${project}/ts-plugin/modelmux.yaml: providers.refuser.plugin: cannot load plugin './refuser.ts' ` +
        "(a TypeScript plugin needs tsx, which is not installed: npm i -D tsx (or compile the plugin to JavaScript))\n",
    );

    await npm(["install", "--prefer-offline", "--save-dev", `tsx@${installedVersion("tsx")}`], project);
    const loaded = await modelmux(["check", "--config", "ts-plugin/modelmux.yaml"]);
    expect(loaded.stderr).toBe("");
    expect(loaded.code).toBe(0);
    expect(loaded.stdout).toContain("is valid: 1 model(s): refuser/m-1");
  });

  it("a core packed without its dist/ (--ignore-scripts) says so, instead of a module-not-found stack", async () => {
    const dist = join(project, "node_modules/@modelmux/core/dist");
    renameSync(dist, `${dist}-aside`);
    try {
      const { code, stderr } = await modelmux(["--version"]);
      expect(stderr).toBe("[modelmux] this @modelmux/core has no dist/: it was packed without its prepack script, which builds it\n");
      expect(code).toBe(1);
    } finally {
      renameSync(`${dist}-aside`, dist);
    }
  });
});
