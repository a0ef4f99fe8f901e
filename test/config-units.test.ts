/**
 * Durations and sizes in the config (README "Configuration"): days (`30d`) wherever a duration is
 * taken, one error per unit that says what is allowed, timers capped at what Node.js can wait, and
 * every YAML example of the READMEs passing the checks `modelmux check` makes.
 */
import { readdirSync, readFileSync, writeFileSync, mkdtempSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import OpenAI from "openai";
import { parseDocument } from "yaml";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createRouter, type ModelmuxConfig } from "@modelmux/core";
import { ConfigError } from "../core/src/config/config-error.ts";
import { loadConfigFile, prepareConfig } from "../core/src/config/load-config.ts";
import { resolveServer } from "../core/src/config/resolve-config.ts";
import { resolveJwt } from "../core/src/config/resolve-jwt.ts";
import { resolveOriginPolicy } from "../core/src/config/resolve-origin-policy.ts";
import { resolveRateLimits } from "../core/src/config/resolve-rate-limits.ts";
import { parseDuration } from "../core/src/config/units.ts";
import { startServer } from "../core/src/server/listen.ts";
import { silentLogger, TEST_KEY, testConfig } from "./helpers/harness.ts";

const ECHO = { echo: { plugin: "provider-echo", models: ["echo-1"] } };
const DAY_MS = 86_400_000;
const DURATION_RULE = "must be a duration: a number of seconds or a string like 60s, 5m, 12h, 30d (units ms, s, m, h, d)";
const SIZE_RULE = "must be a size: a number of bytes or a string like 512kb, 10mb, 1gb (units b, kb, mb, gb)";
const REPO = resolve(import.meta.dirname, "..");

function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("expected a ConfigError");
}

/** "started" when a router starts on `config` (and is closed again), else the message it is refused with. */
async function startOrRefusal(config: ModelmuxConfig): Promise<string> {
  return createRouter(config, { logger: silentLogger(), env: {} }).then(
    async (router) => {
      await router.close();
      return "started";
    },
    (error: unknown) => (error as Error).message,
  );
}

describe("durations in days", () => {
  it("parses d, with the other units", () => {
    expect(parseDuration("30d")).toBe(30 * DAY_MS);
    expect(parseDuration("1.5d")).toBe(1.5 * DAY_MS);
    expect(parseDuration("12h")).toBe(12 * 3_600_000);
    expect(parseDuration(60)).toBe(60_000);
  });

  it("accepts storage.ttl: 30d, rate-limit windows and timeouts in days, from a YAML file as `modelmux check` reads it", () => {
    const dir = mkdtempSync(join(tmpdir(), "modelmux-units-"));
    try {
      const file = join(dir, "modelmux.yaml");
      writeFileSync(
        file,
        [
          "auth: { api_keys: [{ key: sk-x }] }",
          "storage: { plugin: storage-unstorage, options: { driver: memory }, ttl: 30d }",
          "rate_limit: { app: { requests: 10000, window: 1d } }",
          "providers:",
          "  echo: { plugin: provider-echo, models: [echo-1], timeout: 1d, rate_limit: { requests: 5, window: 7d } }",
          "",
        ].join("\n"),
      );
      const { config } = loadConfigFile(file, {});
      expect(config.storage?.ttl).toBe("30d");
      expect(resolveRateLimits(config)?.policy.app).toEqual({ requests: 10_000, windowMs: DAY_MS });
      expect(resolveRateLimits(config)?.policy.providers.get("echo")).toEqual({ requests: 5, windowMs: 7 * DAY_MS });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each<[string, Partial<ModelmuxConfig>, string]>([
    ["storage.ttl", { storage: { plugin: "storage-unstorage", ttl: "30 days" } }, `storage.ttl: ${DURATION_RULE}`],
    ["storage.ttl", { storage: { plugin: "storage-unstorage", ttl: "1w" } }, `storage.ttl: ${DURATION_RULE}`],
    ["a window", { rate_limit: { app: { requests: 1, window: "a minute" } } }, `rate_limit.app.window: ${DURATION_RULE}`],
    ["an override's window", { rate_limit: { apps: { batch: { requests: 1, window: "-5s" } } } }, `rate_limit.apps.batch.window: ${DURATION_RULE}`],
    ["a negative number", { server: { shutdown_timeout: -1 } }, `server.shutdown_timeout: ${DURATION_RULE}`],
    ["a size", { server: { body_limit: "10 megabytes" } }, `server.body_limit: ${SIZE_RULE}`],
  ])("refuses a bad duration or size in %s with what is allowed", (_where, extra, message) => {
    expect(configError(() => prepareConfig(testConfig(ECHO, extra), {}))).toBe(message);
  });

  it("refuses a timeout longer than a Node.js timer holds, naming it", async () => {
    expect(await startOrRefusal(testConfig({ echo: { ...ECHO.echo, timeout: "30d" } }))).toBe("providers.echo.timeout: must be at most 24d (the longest timer Node.js can set)");
    expect(await startOrRefusal(testConfig(ECHO, { server: { shutdown_timeout: "25d" } }))).toBe("server.shutdown_timeout: must be at most 24d (the longest timer Node.js can set)");
    expect(await startOrRefusal(testConfig({ echo: { ...ECHO.echo, timeout: "24d" } }))).toBe("started");
  });

  it("takes a provider timeout of 0 as no limit, and refuses an upstream_body_limit of 0 bytes, naming it", async () => {
    expect(await startOrRefusal(testConfig({ echo: { ...ECHO.echo, timeout: 0 } }))).toBe("started");
    const zero = "server.upstream_body_limit: must be at least 1 byte, e.g. 64mb (the default); 0 would refuse every upstream reply";
    expect(await startOrRefusal(testConfig(ECHO, { server: { upstream_body_limit: "0b" } }))).toBe(zero);
    expect(await startOrRefusal(testConfig(ECHO, { server: { upstream_body_limit: "0.5b" } }))).toBe(zero);
    expect(await startOrRefusal(testConfig(ECHO, { server: { upstream_body_limit: 1 } }))).toBe("started");
  });
});

describe("storage.ttl: 30d on a running router", () => {
  afterEach(() => vi.useRealTimers());

  it("keeps a stored completion for 30 days, then forgets it", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    const config = testConfig(ECHO, { storage: { plugin: "storage-unstorage", options: { driver: "memory" }, ttl: "30d" } });
    const server = await startServer(await createRouter(config, { logger: silentLogger(), env: {} }), { host: "127.0.0.1", port: 0 });
    try {
      const openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: TEST_KEY, maxRetries: 0 });
      const stored = await openai.chat.completions.create({ model: "echo/echo-1", messages: [{ role: "user", content: "keep me" }], store: true });
      vi.setSystemTime(Date.now() + 29 * DAY_MS);
      expect((await openai.chat.completions.retrieve(stored.id)).id).toBe(stored.id);
      vi.setSystemTime(Date.now() + 2 * DAY_MS);
      await expect(openai.chat.completions.retrieve(stored.id)).rejects.toMatchObject({ status: 404 });
    } finally {
      await server.stop();
    }
  });
});

/** The ```yaml blocks of a Markdown file. */
function yamlBlocks(file: string): string[] {
  return [...readFileSync(file, "utf8").matchAll(/^```ya?ml\n([\s\S]*?)^```/gm)].map((match) => match[1]!);
}

const READMES = [
  "README.md",
  ...["plugins", "examples"].flatMap((dir) =>
    readdirSync(join(REPO, dir))
      .map((name) => join(dir, name, "README.md"))
      .filter((file) => existsSync(join(REPO, file))),
  ),
];

/** Every variable an example names is set: `${VAR}` substitution must not be what fails. */
const ANY_ENV = new Proxy({}, { get: () => "set-in-test" }) as NodeJS.ProcessEnv;

/**
 * An example as a whole config: the smallest valid one, with the example's sections on top. A
 * provider the example shortens to a comment (`openai: # …`) keeps only what it shows.
 */
function asWholeConfig(example: Record<string, unknown>): ModelmuxConfig {
  const providers: Record<string, unknown> = { ...ECHO };
  for (const [name, block] of Object.entries((example.providers as Record<string, unknown> | undefined) ?? {})) {
    providers[name] = { plugin: "provider-echo", models: ["m"], ...(block as object | null) };
  }
  return { auth: { api_keys: [{ key: TEST_KEY }] }, ...example, providers } as ModelmuxConfig;
}

describe("the READMEs' YAML examples", () => {
  const examples = READMES.flatMap((file) => yamlBlocks(join(REPO, file)).map((text, i) => [`${file} #${i + 1}`, text] as const));

  it("include the storage examples with ttl: 30d", () => {
    const names = examples.filter(([, text]) => /ttl: 30d/.test(text)).map(([name]) => name.replace(/ #\d+$/, ""));
    expect(names).toEqual(["README.md", "plugins/storage-unstorage/README.md"]);
  });

  it.each(examples)("%s passes the config schema and its resolvers", (_name, text) => {
    const document = parseDocument(text);
    expect(document.errors).toEqual([]);
    const config = prepareConfig(asWholeConfig(document.toJS() as Record<string, unknown>), ANY_ENV);
    resolveServer(config);
    resolveOriginPolicy(config);
    resolveRateLimits(config);
    resolveJwt(config);
    if (config.storage?.ttl !== undefined) expect(parseDuration(config.storage.ttl)).toBeGreaterThan(0);
  });
});
