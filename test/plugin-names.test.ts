/**
 * A plugin name that no package answers to: the error names what was looked for, the built-in
 * plugins of the kind the config wants there (from the generated `builtin-plugins.ts`), the closest
 * one when the name is a near miss, and how a third-party plugin is named (README, "Plugins").
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createRouter, type ModelmuxConfig } from "@modelmux/core";
import { ConfigError } from "../core/src/config/config-error.ts";
import { BUILTIN_PLUGINS } from "../core/src/plugins/builtin-plugins.ts";
import { silentLogger, testConfig } from "./helpers/harness.ts";

const FIXTURES = fileURLToPath(new URL("./fixtures/", import.meta.url));
const GENERATOR = new URL("../core/build/write-builtin-plugins.mjs", import.meta.url);

async function problemsOf(config: ModelmuxConfig, baseDir = FIXTURES): Promise<readonly string[]> {
  const error = await createRouter(config, { env: {}, logger: silentLogger(), baseDir }).then(
    async (router) => {
      await router.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return (error as ConfigError).problems;
}

const HOW = 'A third-party plugin is named by its package name (installed where the config is) or by a path from the config\'s folder';
const BUILTIN_PROVIDERS =
  "The built-in provider plugins are provider-anthropic, provider-echo, provider-gemini and provider-openai, each the package @modelmux/<name> (npm install it where it is missing).";

describe("the built-in plugins", () => {
  it("are listed by kind in a file generated from the plugins/* packages, which is current", async () => {
    const { builtinPluginsSource, BUILTIN_PLUGINS_FILE } = (await import(GENERATOR.href)) as { builtinPluginsSource: () => string; BUILTIN_PLUGINS_FILE: string };
    expect(readFileSync(BUILTIN_PLUGINS_FILE, "utf8"), "run: node core/build/write-builtin-plugins.mjs").toBe(builtinPluginsSource());
    expect(BUILTIN_PLUGINS).toEqual({
      provider: ["provider-anthropic", "provider-echo", "provider-gemini", "provider-openai"],
      storage: ["storage-unstorage"],
      ratelimit: ["ratelimit-memory", "ratelimit-redis"],
    });
  });
});

describe("an unknown plugin name", () => {
  it("of a provider lists the built-in providers and how to load a third-party one", async () => {
    const [problem] = await problemsOf(testConfig({ x: { plugin: "provider-nonexistent", models: ["m"] } }));
    expect(problem).toBe(
      `providers.x.plugin: cannot load plugin 'provider-nonexistent' (no package @modelmux/provider-nonexistent is installed). ${BUILTIN_PROVIDERS} ` +
        `${HOW} (./plugins/my-provider.js); see the README, "Plugins"`,
    );
  });

  it("that is a near miss of a built-in one names it", async () => {
    const [problem] = await problemsOf(testConfig({ x: { plugin: "provider-opnai", models: ["m"] } }));
    expect(problem).toBe(
      `providers.x.plugin: cannot load plugin 'provider-opnai' (no package @modelmux/provider-opnai is installed): did you mean provider-openai? ${BUILTIN_PROVIDERS} ` +
        `${HOW} (./plugins/my-provider.js); see the README, "Plugins"`,
    );
  });

  it("of the storage and of the rate limiter lists the built-ins of their kind", async () => {
    const echo = { echo: { plugin: "provider-echo", models: ["echo-1"] } };
    const config = testConfig(echo, { storage: { plugin: "storage-redis" }, rate_limit: { plugin: "ratelimit-memroy", app: { requests: 1, window: "1s" } } });
    expect(await problemsOf(config)).toEqual([
      "storage.plugin: cannot load plugin 'storage-redis' (no package @modelmux/storage-redis is installed). " +
        "The built-in storage plugins are storage-unstorage, each the package @modelmux/<name> (npm install it where it is missing). " +
        `${HOW} (./plugins/my-storage.js); see the README, "Plugins"`,
      "rate_limit.plugin: cannot load plugin 'ratelimit-memroy' (no package @modelmux/ratelimit-memroy is installed): did you mean ratelimit-memory? " +
        "The built-in rate-limit plugins are ratelimit-memory and ratelimit-redis, each the package @modelmux/<name> (npm install it where it is missing). " +
        `${HOW} (./plugins/my-ratelimit.js); see the README, "Plugins"`,
    ]);
  });

  it("of a package says where it was looked for", async () => {
    const [problem] = await problemsOf(testConfig({ x: { plugin: "@acme/modelmux-provider-missing", models: ["m"] } }));
    expect(problem).toBe(
      `providers.x.plugin: cannot load plugin '@acme/modelmux-provider-missing' (no package @acme/modelmux-provider-missing is installed, ` +
        `neither where the config is (${FIXTURES.slice(0, -1)}) nor beside modelmux). ${BUILTIN_PROVIDERS} ${HOW} (./plugins/my-provider.js); see the README, "Plugins"`,
    );
  });

  it("of a path that names no file says which file, and from which folder", async () => {
    expect(await problemsOf(testConfig({ x: { plugin: "./plugins/nope.js", models: ["m"] } }))).toEqual([
      `providers.x.plugin: cannot load plugin './plugins/nope.js' (no file ${FIXTURES}plugins/nope.js: a path is read from the config's folder, ${FIXTURES.slice(0, -1)})`,
    ]);
  });
});
