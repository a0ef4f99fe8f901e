/**
 * A config with several problems is told them all at once, each with its path: by `createRouter`
 * (a ConfigError whose `problems` lists them and whose message is those lines) and by
 * `modelmux check` (one `[modelmux] <file>: …` line each, exit 1). The schema's errors come first,
 * all of them; once it passes, every section's checks and every plugin's options.
 */
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { createRouter, defineProvider, type ModelmuxConfig, type RouterOptions } from "@modelmux/core";
import { ConfigError } from "../core/src/config/config-error.ts";
import { silentLogger, testConfig } from "./helpers/harness.ts";
import { startCli } from "./helpers/serve-child.ts";

const CONFIGS = fileURLToPath(new URL("./fixtures/configs/", import.meta.url));

async function problemsOf(config: ModelmuxConfig, options: RouterOptions = {}): Promise<readonly string[]> {
  const error = await createRouter(config, { env: {}, logger: silentLogger(), ...options }).then(
    async (router) => {
      await router.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  const { problems, message } = error as ConfigError;
  expect(message).toBe(problems.join("\n"));
  return problems;
}

const echo = { plugin: "provider-echo", models: ["echo-1"] };

describe("createRouter reports every problem", () => {
  it("of the schema, each once, a failed alternative (a duration, a model entry) as one line", async () => {
    const config = testConfig(
      { echo: { ...echo, timeout: "30 days" }, x: { plugin: "provider-echo", models: ["ok", { id: "m", colour: "red" } as never] } },
      { server: { port: 70000, body_limit: "10 megabytes" }, logging: { level: "loud" as never } },
    );
    expect(await problemsOf(config)).toEqual([
      "server.port: must be <= 65535",
      "server.body_limit: must be a size: a number of bytes or a string like 512kb, 10mb, 1gb (units b, kb, mb, gb)",
      "logging.level: must be one of silent, error, warn, info, debug",
      "providers.echo.timeout: must be a duration: a number of seconds or a string like 60s, 5m, 12h, 30d (units ms, s, m, h, d)",
      "providers.x.models[1]: must be a string",
    ]);
  });

  it("of a pool alias (an if/then/else in the schema): each member's, without the branch's own error", async () => {
    const config = testConfig({ echo }, { aliases: { smart: { loadbalance: [{ weight: 1 } as never, { model: "echo/echo-1", weight: "x" as never }] } } });
    expect(await problemsOf(config)).toEqual([
      "aliases.smart.loadbalance[0].model: is required",
      "aliases.smart.loadbalance[1].weight: must be a number more than 0 (the member's share of the pool's requests, e.g. 1); remove a member that should get none",
    ]);
  });

  it("of the environment: every variable that is unset without a default", async () => {
    const config = testConfig({ echo: { ...echo, requires_env: ["${NOPE_ONE}"] } });
    config.auth!.api_keys = [{ key: "${NOPE_TWO}" }];
    expect(await problemsOf(config)).toEqual([
      "auth.api_keys[0].key: environment variable NOPE_TWO is not set or is empty (write ${NOPE_TWO:-default} to give a default)",
      "providers.echo.requires_env[0]: environment variable NOPE_ONE is not set or is empty (write ${NOPE_ONE:-default} to give a default)",
    ]);
  });

  it("of every section and every plugin once the schema passes", async () => {
    const config = testConfig(
      {
        echo,
        openai: { plugin: "provider-openai", base_url: "localhost:8080", prefill_style: "loud", models: ["gpt-4o-mini"] },
        other: { plugin: "provider-nonexistent", models: ["m-1"] },
      },
      {
        server: { trusted_proxies: ["10.0.0.0/33", "not-an-ip"] },
        storage: { plugin: "storage-unstorage", options: { driver: "disk" } },
        rate_limit: { app: { requests: 10, window: 0 }, developer: { requests: 1, window: "0s" } },
        aliases: { fast: "echo/echo-9" },
        fallbacks: { "echo/echo-1": ["openai/gpt-4o", "echo/echo-1"] },
        pricing: { "echo/echo-2": { input: 1, output: 2 } },
        responses: { provider: "opnai" },
      },
    );
    const problems = await problemsOf(config);
    expect(problems.slice(0, 9)).toEqual([
      "server.trusted_proxies[0]: '10.0.0.0/33' is not an IP address or a CIDR range (e.g. 127.0.0.1, 10.0.0.0/8, fd00::/8)",
      "server.trusted_proxies[1]: 'not-an-ip' is not an IP address or a CIDR range (e.g. 127.0.0.1, 10.0.0.0/8, fd00::/8)",
      "aliases.fast: 'echo/echo-9' is not a configured model (name one of providers.<name>.models as 'provider/model')",
      `fallbacks["echo/echo-1"][0]: 'openai/gpt-4o' is not a configured model (name one of providers.<name>.models as 'provider/model', or a plain alias of one)`,
      `fallbacks["echo/echo-1"][1]: 'echo/echo-1' is the model the list is for; list other models, tried in order when it fails`,
      `pricing["echo/echo-2"]: 'echo/echo-2' is not a configured model (name one of providers.<name>.models as 'provider/model')`,
      "responses.provider: 'opnai' is not a configured provider (configured: echo, openai, other)",
      "providers.openai.base_url: must be an http(s) URL",
      "providers.openai.prefill_style: must be one of plain, prefix, continue_final_message",
    ]);
    expect(problems[9]).toMatch(/^providers\.other\.plugin: cannot load plugin 'provider-nonexistent' \(/);
    expect(problems.slice(10)).toEqual([
      "storage.options.driver: must be one of memory, fs, redis",
      "rate_limit.app.window: must be longer than 0 (e.g. 60s)",
      "rate_limit.developer.window: must be longer than 0 (e.g. 60s)",
    ]);
  });

  it("tells a setting that every provider inherits once, not once per provider", async () => {
    const config = testConfig({ a: echo, b: echo }, { routing: { timeouts: { connect: "30d" } } });
    expect(await problemsOf(config)).toEqual(["routing.timeouts.connect: must be at most 24d (the longest timer Node.js can set)"]);
  });

  it("of every provider that fails to start, closing those that started", async () => {
    let closed = 0;
    const plugin = (fail: boolean) =>
      defineProvider({
        name: fail ? "broken" : "fine",
        optionsSchema: { type: "object" },
        setup: () => {
          if (fail) throw new Error("no upstream");
          return { capabilities: () => ({}), chat: async () => ({}) as never, chatStream: async () => (async function* () {})(), close: () => void closed++ };
        },
      });
    const config = testConfig({ a: { plugin: "broken", models: ["m"] }, b: { plugin: "fine", models: ["m"] }, c: { plugin: "broken", models: ["m"] } });
    expect(await problemsOf(config, { plugins: { broken: plugin(true), fine: plugin(false) } })).toEqual([
      "providers.a: plugin 'broken' failed to start: no upstream",
      "providers.c: plugin 'broken' failed to start: no upstream",
    ]);
    expect(closed).toBe(1);
  });
});

describe("modelmux check reports every problem", () => {
  async function check(file: string) {
    const running = startCli(["check", "--config", `test/fixtures/configs/${file}`], { timeLimitMs: 20_000 });
    const { code } = await running.exited;
    return { code, stdout: running.stdout(), stderr: running.stderr() };
  }

  // The first run after a source change compiles dist/ and says so on stderr: let it be this one.
  beforeAll(async () => {
    await startCli(["--version"], { timeLimitMs: 60_000 }).exited;
  }, 60_000);

  it("of the schema, one line each, and exits 1", async () => {
    const { code, stdout, stderr } = await check("many-schema-problems.yaml");
    expect(stdout).toBe("");
    const at = `[modelmux] ${CONFIGS}many-schema-problems.yaml: `;
    expect(stderr).toBe(
      [
        "server.port: must be <= 65535",
        "server.body_limit: must be a size: a number of bytes or a string like 512kb, 10mb, 1gb (units b, kb, mb, gb)",
        "logging.level: must be one of silent, error, warn, info, debug",
        "providers.echo.models: must have at least 1 item",
      ]
        .map((problem) => `${at}${problem}\n`)
        .join(""),
    );
    expect(code).toBe(1);
  });

  it("of the sections and the plugins, one line each, and exits 1", async () => {
    const { code, stdout, stderr } = await check("many-problems.yaml");
    expect(stdout).toBe("");
    const lines = stderr.trimEnd().split("\n");
    const at = `[modelmux] ${CONFIGS}many-problems.yaml: `;
    for (const line of lines) expect(line.startsWith(at)).toBe(true);
    const problems = lines.map((line) => line.slice(at.length));
    expect(problems).toHaveLength(9);
    expect(problems).toEqual(
      expect.arrayContaining([
        "aliases.fast: 'echo/echo-9' is not a configured model (name one of providers.<name>.models as 'provider/model')",
        `fallbacks["echo/echo-1"][1]: 'echo/echo-1' is the model the list is for; list other models, tried in order when it fails`,
        "responses.provider: 'opnai' is not a configured provider (configured: echo, openai, other)",
        "providers.openai.base_url: must be an http(s) URL",
        "storage.options.driver: must be one of memory, fs, redis",
        "rate_limit.app.window: must be longer than 0 (e.g. 60s)",
      ]),
    );
    expect(problems.some((problem) => problem.startsWith("providers.other.plugin: cannot load plugin 'provider-nonexistent'"))).toBe(true);
    expect(code).toBe(1);
  });
});
