import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import echoPlugin from "@modelmux/provider-echo";
import { createRouter, defineProvider, defineRateLimiter, type ModelmuxConfig, type PluginDefinition, type Provider, type Router } from "@modelmux/core";
import { ConfigError } from "../core/src/config/config-error.ts";
import { loadConfigFile } from "../core/src/config/load-config.ts";
import { loadPlugin } from "../core/src/plugins/load-plugin.ts";
import type { RouterOptions } from "../core/src/router.ts";
import storagePlugin, { createFixtureStorage } from "./fixtures/plugins/storage-plugin.ts";
import { postJson, silentLogger, testConfig } from "./helpers/harness.ts";

const FIXTURES = fileURLToPath(new URL("./fixtures/", import.meta.url));
const PLUGINS_DIR = `${FIXTURES}plugins`;
const CONFIGS_DIR = `${FIXTURES}configs`;

const noProvider: Provider = {
  capabilities: () => ({ chat: true }),
  chat: async () => {
    throw new Error("not called");
  },
  chatStream: async () => {
    throw new Error("not called");
  },
};

async function withRouter<T>(config: ModelmuxConfig, options: RouterOptions, use: (router: Router) => Promise<T>): Promise<T> {
  const router = await createRouter(config, { env: {}, logger: silentLogger(), ...options });
  try {
    return await use(router);
  } finally {
    await router.close();
  }
}

async function startError(config: ModelmuxConfig, options: RouterOptions = {}): Promise<string> {
  const error = await createRouter(config, { env: {}, logger: silentLogger(), ...options }).then(
    async (router) => {
      await router.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return (error as ConfigError).message;
}

async function chatContent(router: Router, model: string, key?: string): Promise<string> {
  const auth: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  const body = { model, messages: [{ role: "user", content: "Hello, loader" }] };
  const response = await router.fetch(new Request("http://x/v1/chat/completions", postJson(body, auth)));
  expect(response.status).toBe(200);
  return ((await response.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content;
}

const one = (plugin: string, extra: Record<string, unknown> = {}) => testConfig({ x: { plugin, models: ["m-1"], ...extra } });

describe("resolving a plugin reference", () => {
  it("maps a built-in short name to the @modelmux/ package", async () => {
    const loaded = await loadPlugin("provider-echo", "provider", "providers.echo.plugin", CONFIGS_DIR);
    expect(loaded).toBe(echoPlugin);
    await withRouter(testConfig({ echo: { plugin: "provider-echo", models: ["echo-1"] } }), {}, async (router) => {
      expect(await chatContent(router, "echo/echo-1")).toBe("Hello, loader");
    });
  });

  it("accepts the full package name of a built-in plugin", async () => {
    expect(await loadPlugin("@modelmux/provider-echo", "provider", "p", CONFIGS_DIR)).toBe(echoPlugin);
  });

  it("loads a ./path plugin relative to the config file's folder", async () => {
    const { config, baseDir } = loadConfigFile(`${CONFIGS_DIR}/local-plugin.yaml`, {});
    expect(config.providers.local?.plugin).toBe("../plugins/options-reporter.ts");
    await withRouter(config, { baseDir }, async (router) => {
      expect(router.models.entries.map((m) => m.name)).toEqual(["local/reporter-1"]);
      const reply = JSON.parse(await chatContent(router, "local/reporter-1", "sk-fixture-key")) as unknown;
      // greeting comes from ${GREETING:-hi}; repeat is the optionsSchema default.
      expect(reply).toEqual({ name: "local", options: { greeting: "hi", repeat: 1 } });
    });
  });

  it("resolves a ./path from baseDir, not from the working directory", async () => {
    const { config } = loadConfigFile(`${CONFIGS_DIR}/local-plugin.yaml`, {});
    const message = await startError(config, { baseDir: FIXTURES });
    expect(message).toMatch(/^providers\.local\.plugin: cannot load plugin '\.\.\/plugins\/options-reporter\.ts' \(/);
  });

  it("loads an absolute path", async () => {
    await withRouter(one(`${PLUGINS_DIR}/options-reporter.ts`, { greeting: "abs" }), { baseDir: "/" }, async (router) => {
      expect(JSON.parse(await chatContent(router, "x/m-1"))).toEqual({ name: "x", options: { greeting: "abs", repeat: 1 } });
    });
  });

  it("reports a package that does not exist", async () => {
    const message = await startError(one("@acme/modelmux-provider-missing"));
    expect(message).toMatch(/^providers\.x\.plugin: cannot load plugin '@acme\/modelmux-provider-missing' \(.*@acme\/modelmux-provider-missing/);
  });

  it("reports a short name with no built-in package, naming the package it looked for", async () => {
    const message = await startError(one("provider-nonexistent"));
    expect(message).toMatch(/^providers\.x\.plugin: cannot load plugin 'provider-nonexistent' \(.*@modelmux\/provider-nonexistent/);
  });

  it("reports a ./path that does not exist", async () => {
    const message = await startError(one("./nope.ts"), { baseDir: PLUGINS_DIR });
    expect(message).toMatch(/^providers\.x\.plugin: cannot load plugin '\.\/nope\.ts' \(/);
  });

  it("refuses a module whose default export is not a plugin definition", async () => {
    const message = await startError(one("./not-a-plugin.ts"), { baseDir: PLUGINS_DIR });
    expect(message).toBe(
      "providers.x.plugin: './not-a-plugin.ts' is not a modelmux plugin: its default export must be made with defineProvider, defineStorage or defineRateLimiter",
    );
  });

  it.each([
    ["./storage-plugin.ts", "storage"],
    ["./ratelimit-plugin.ts", "rate-limit"],
  ])("refuses %s, a %s plugin, as a provider", async (reference, kind) => {
    const message = await startError(one(reference), { baseDir: PLUGINS_DIR });
    expect(message).toBe(`providers.x.plugin: '${reference}' is a ${kind} plugin, not a provider plugin`);
  });
});

describe("plugin options", () => {
  it("refuses an unknown option of provider-openai, naming it under providers.<name>", async () => {
    const config = testConfig({ openai: { plugin: "provider-openai", base_ur: "http://127.0.0.1:9/v1", models: ["gpt-4o-mini"] } });
    expect(await startError(config)).toBe("providers.openai.base_ur: is not a known field; did you mean base_url?");
  });

  it.each(["localhost:8080/v1", "not a url", "ftp://files.example/v1", "http://"])("refuses base_url %j: it must be an http(s) URL", async (base_url) => {
    const config = testConfig({ openai: { plugin: "provider-openai", base_url, models: ["gpt-4o-mini"] } });
    expect(await startError(config)).toBe("providers.openai.base_url: must be an http(s) URL");
  });

  it("refuses an option of provider-echo that breaks its schema", async () => {
    const config = testConfig({ echo: { plugin: "provider-echo", chunk_size: 0, models: ["echo-1"] } });
    expect(await startError(config)).toBe("providers.echo.chunk_size: must be >= 1");
  });

  it("refuses an option of the wrong type in a path plugin", async () => {
    expect(await startError(one("./options-reporter.ts", { repeat: "often" }), { baseDir: PLUGINS_DIR })).toBe("providers.x.repeat: must be an integer");
  });

  it("hands setup only the plugin's own keys, with the schema's defaults applied", async () => {
    const seen: unknown[] = [];
    const recorder = defineProvider<Record<string, unknown>>({
      name: "recorder",
      optionsSchema: {
        type: "object",
        additionalProperties: false,
        properties: { region: { type: "string", default: "eu" }, retries: { type: "integer", default: 2 }, label: { type: "string" } },
      },
      setup(options) {
        seen.push(options);
        return noProvider;
      },
    });
    const block = { plugin: "recorder", models: ["m-1"], timeout: "5s", capabilities: { tools: false }, requires_env: ["SET"], label: "L" };
    const config = testConfig({ x: block });
    await withRouter(config, { plugins: { recorder }, env: { SET: "1" } }, async () => {});
    expect(seen).toEqual([{ region: "eu", retries: 2, label: "L" }]);
    expect(config.providers.x).toEqual(block);
  });

  it("coerces substituted option values by the plugin's schema", async () => {
    const config = one("./options-reporter.ts", { repeat: "${REPEAT}", greeting: "${GREETING}" });
    await withRouter(config, { baseDir: PLUGINS_DIR, env: { REPEAT: "3", GREETING: "42" } }, async (router) => {
      expect(JSON.parse(await chatContent(router, "x/m-1"))).toEqual({ name: "x", options: { greeting: "42", repeat: 3 } });
    });
  });

  it("reports a plugin whose optionsSchema does not compile", async () => {
    const broken = defineProvider({ name: "broken", optionsSchema: { type: "object", properties: { a: { type: "strnig" } } }, setup: () => noProvider });
    expect(await startError(one("broken"), { plugins: { broken } })).toMatch(/^providers\.x: plugin 'broken' has an invalid optionsSchema/);
  });
});

describe("plugin setup", () => {
  it.each([
    ["throws", () => {
      throw new Error("no credentials file");
    }],
    ["rejects", async () => {
      throw new Error("no credentials file");
    }],
  ])("reports a plugin whose setup %s as failed to start", async (_how, setup) => {
    const boom = defineProvider({ name: "boom", optionsSchema: { type: "object" }, setup: setup as () => Provider | Promise<Provider> });
    expect(await startError(one("boom"), { plugins: { boom } })).toBe("providers.x: plugin 'boom' failed to start: no credentials file");
  });

  it("gives setup the provider's config name, a logger and the router's HTTP client", async () => {
    const contexts: Array<{ name: string; http: unknown; hasLogger: boolean }> = [];
    const probe = defineProvider({
      name: "probe",
      optionsSchema: { type: "object" },
      setup(_options, ctx) {
        contexts.push({ name: ctx.name, http: ctx.http, hasLogger: typeof ctx.logger.info === "function" });
        return noProvider;
      },
    });
    const http = { request: async () => Promise.reject(new Error("offline")), close: async () => {} };
    const config = testConfig({ groq: { plugin: "probe", models: ["a"] }, other: { plugin: "probe", models: ["b"] } });
    await withRouter(config, { plugins: { probe }, http }, async () => {});
    expect(contexts).toEqual([
      { name: "groq", http, hasLogger: true },
      { name: "other", http, hasLogger: true },
    ]);
  });

  it("calls each provider's close when the router closes", async () => {
    let closed = 0;
    const closing = defineProvider({ name: "closing", optionsSchema: { type: "object" }, setup: () => ({ ...noProvider, close: () => void closed++ }) });
    await withRouter(testConfig({ a: { plugin: "closing", models: ["m"] }, b: { plugin: "closing", models: ["m"] } }), { plugins: { closing } }, async () => {
      expect(closed).toBe(0);
    });
    expect(closed).toBe(2);
  });
});

describe("RouterOptions.plugins", () => {
  it("uses an injected definition by its reference, without importing anything", async () => {
    const mine = defineProvider({
      name: "mine",
      optionsSchema: { type: "object" },
      setup: () => ({
        ...noProvider,
        async chat(_request, call) {
          return {
            id: "chatcmpl-mine",
            object: "chat.completion" as const,
            created: 0,
            model: call.model,
            choices: [{ index: 0, finish_reason: "stop" as const, message: { role: "assistant" as const, content: `mine:${call.model}` } }],
            usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
          };
        },
      }),
    });
    const config = testConfig({ x: { plugin: "my-provider-not-on-disk", models: ["m-1"] } });
    await withRouter(config, { plugins: { "my-provider-not-on-disk": mine } }, async (router) => {
      expect(await chatContent(router, "x/m-1")).toBe("mine:m-1");
    });
    // An injected definition wins over a built-in short name.
    await withRouter(testConfig({ echo: { plugin: "provider-echo", models: ["echo-1"] } }), { plugins: { "provider-echo": mine } }, async (router) => {
      expect(await chatContent(router, "echo/echo-1")).toBe("mine:echo-1");
    });
  });

  it("validates an injected plugin's options like an imported one's", async () => {
    expect(await startError(testConfig({ e: { plugin: "injected-echo", models: ["m"], chunk_size: 0 } }), { plugins: { "injected-echo": echoPlugin } })).toBe(
      "providers.e.chunk_size: must be >= 1",
    );
  });

  it.each([
    ["storage", storagePlugin],
    [
      "rate-limit",
      defineRateLimiter({
        name: "r",
        optionsSchema: { type: "object" },
        setup: () => ({ acquire: async () => ({ allowed: true, retryAfterMs: 0, states: [] }), settle: async () => {} }),
      }),
    ],
  ])("refuses an injected %s plugin as a provider", async (_kind, definition) => {
    expect(await startError(one("injected"), { plugins: { injected: definition } })).toBe("providers.x.plugin: 'injected' is not a provider plugin");
  });
});

describe("the storage contract a storage plugin states", () => {
  const withStorage = (plugin: string) => testConfig({ echo: { plugin: "provider-echo", models: ["echo-1"] } }, { storage: { plugin } });
  const PRE_OWNER =
    "[storage:pre-owner] this storage plugin is written for the storage contract before owners (its defineStorage has no `contract: 2`), " +
    "so it would lose sight of every stored completion: every Storage call now names the owner (the caller's app): first in getCompletion, " +
    "updateMetadata and deleteCompletion, and as `owner` on saved entries, list queries and the entries returned. " +
    "Update the plugin as the README's \"Plugins\" section says and add `contract: 2` to its definition, or name another plugin in storage.plugin";

  it("refuses a plugin written before owners (no `contract`), loaded by path, naming what changed and what to do", async () => {
    expect(await startError(withStorage("./pre-owner-storage.mjs"), { baseDir: PLUGINS_DIR })).toBe(PRE_OWNER);
  });

  it("refuses an injected one before its setup runs, and one that states another version", async () => {
    let setups = 0;
    const setup = () => (setups++, createFixtureStorage());
    // What defineStorage made of a definition written for the contract before owners: no `contract`.
    const preOwner = { kind: "storage", name: "pre-owner", optionsSchema: { type: "object" }, setup } as unknown as PluginDefinition;
    expect(await startError(withStorage("old"), { plugins: { old: preOwner } })).toBe(PRE_OWNER);
    const future = { ...storagePlugin, contract: 3, setup } as unknown as PluginDefinition;
    expect(await startError(withStorage("future"), { plugins: { future } })).toBe(
      "[storage:fixture-storage] this storage plugin states `contract: 3`, but this modelmux speaks storage contract 2 (every Storage call now names the owner " +
        "(the caller's app): first in getCompletion, updateMetadata and deleteCompletion, and as `owner` on saved entries, list queries and the entries returned): " +
        "use a version of the plugin written for contract 2, or name another plugin in storage.plugin",
    );
    expect(setups).toBe(0);
  });

  it("loads a plugin that states `contract: 2`", async () => {
    await withRouter(withStorage("./storage-plugin.ts"), { baseDir: PLUGINS_DIR }, async (router) => {
      const stored = await router.fetch(new Request("http://x/v1/chat/completions", postJson({ model: "echo/echo-1", store: true, messages: [{ role: "user", content: "kept" }] })));
      expect(stored.status).toBe(200);
    });
  });
});
