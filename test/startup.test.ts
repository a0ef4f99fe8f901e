/**
 * What createRouter guarantees at start-up beyond the config schema: one substitution pass,
 * nothing left open when a start fails, and cross-references checked whatever the environment.
 */
import { describe, expect, it } from "vitest";
import { createRouter, defineProvider, defineStorage, type ModelmuxConfig } from "@modelmux/core";
import { ConfigError } from "../core/src/config/config-error.ts";
import { readConfigFile } from "../core/src/config/load-config.ts";
import { postJson, silentLogger, testConfig } from "./helpers/harness.ts";
import { probeCompletion } from "./helpers/probe-provider.ts";

function countingPlugin(counter: { closed: number; started?: number }, failSetup = false) {
  return defineProvider({
    name: "counting",
    optionsSchema: { type: "object" },
    setup() {
      counter.started = (counter.started ?? 0) + 1;
      if (failSetup) throw new Error("cannot start");
      return {
        capabilities: () => ({}),
        chat: async () => probeCompletion("m"),
        chatStream: async () => (async function* () {})(),
        close: () => void counter.closed++,
      };
    },
  });
}

describe("createRouter at start-up", () => {
  it("substitutes ${VAR} once: an environment value that contains ${…} is taken literally", async () => {
    const env = { MY_KEY: "sk-${OTHER:-zzz}" };
    const config = testConfig({ echo: { plugin: "provider-echo", models: ["echo-1"] } });
    config.auth!.api_keys = [{ key: "${MY_KEY}" }];
    const router = await createRouter(config, { env, logger: silentLogger() });
    const body = { model: "echo/echo-1", messages: [{ role: "user", content: "x" }] };
    const ok = await router.fetch(new Request("http://x/v1/chat/completions", postJson(body, { authorization: "Bearer sk-${OTHER:-zzz}" })));
    expect(ok.status).toBe(200);
    const substitutedTwice = await router.fetch(new Request("http://x/v1/chat/completions", postJson(body, { authorization: "Bearer sk-zzz" })));
    expect(substitutedTwice.status).toBe(401);
    await router.close();
  });

  it("reads a file without substituting it, so the router's single pass is the only one", () => {
    const { raw } = readConfigFile(new URL("../config/modelmux.yaml", import.meta.url).pathname);
    expect(raw.auth!.api_keys[0]!.key).toBe("${MODELMUX_API_KEY:-}");
  });

  it("closes the providers already set up when a later one fails to start", async () => {
    const counter = { closed: 0 };
    const config: ModelmuxConfig = testConfig({ a: { plugin: "ok", models: ["m"] }, b: { plugin: "broken", models: ["m"] } });
    await expect(
      createRouter(config, { logger: silentLogger(), plugins: { ok: countingPlugin(counter), broken: countingPlugin(counter, true) } }),
    ).rejects.toThrow("providers.b: plugin 'counting' failed to start: cannot start");
    expect(counter.closed).toBe(1);
  });

  it("sets up no provider when a check that needs none (an alias) fails", async () => {
    const counter = { closed: 0, started: 0 };
    const config = testConfig({ a: { plugin: "ok", models: ["m"] } }, { aliases: { fast: "a/typo" } });
    await expect(createRouter(config, { logger: silentLogger(), plugins: { ok: countingPlugin(counter) } })).rejects.toThrow(ConfigError);
    expect(counter.started).toBe(0);
  });

  it("closes the providers when a later set-up (the storage's) fails", async () => {
    const counter = { closed: 0 };
    const failing = defineStorage({
      contract: 2,
      name: "failing",
      optionsSchema: { type: "object" },
      setup() {
        throw new Error("no disk");
      },
    });
    const config = testConfig({ a: { plugin: "ok", models: ["m"] } }, { storage: { plugin: "failing" } });
    await expect(createRouter(config, { logger: silentLogger(), plugins: { ok: countingPlugin(counter), failing } })).rejects.toThrow(
      "storage: plugin 'failing' failed to start: no disk",
    );
    expect(counter.closed).toBe(1);
  });

  it("does not take a name of Object.prototype for an injected plugin", async () => {
    const config = testConfig({ x: { plugin: "constructor", models: ["m"] } });
    await expect(createRouter(config, { logger: silentLogger() })).rejects.toThrow("providers.x.plugin: cannot load plugin 'constructor'");
  });

  it("checks an alias against the config even when its provider is off", async () => {
    const config = testConfig(
      { echo: { plugin: "provider-echo", models: ["echo-1"] }, o: { plugin: "provider-echo", requires_env: ["NOPE"], models: ["gpt-4o-mini"] } },
      { aliases: { fast: "o/gpt-4o-minii" } },
    );
    await expect(createRouter(config, { env: {}, logger: silentLogger() })).rejects.toThrow("aliases.fast: 'o/gpt-4o-minii' is not a configured model");
  });
});
