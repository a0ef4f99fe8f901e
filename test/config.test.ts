import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createRouter, type HttpClient, type ModelmuxConfig } from "@modelmux/core";
import { ConfigError } from "../core/src/config/config-error.ts";
import { DEFAULT_CONFIG_PATH, loadConfigFile, prepareConfig, readConfigFile } from "../core/src/config/load-config.ts";
import { createLogger } from "../core/src/logger.ts";
import { silentLogger, TEST_KEY, testConfig } from "./helpers/harness.ts";

const ECHO = { echo: { plugin: "provider-echo", models: ["echo-1"] } };
const ECHO_YAML = "providers:\n  echo:\n    plugin: provider-echo\n    models: [echo-1]\n";
const dir = mkdtempSync(join(tmpdir(), "modelmux-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function writeConfig(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

/** Runs `fn` and returns the ConfigError it throws (fails the test if it throws anything else). */
function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected a ConfigError, nothing was thrown");
}

async function rejection(promise: Promise<unknown>): Promise<ConfigError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return error as ConfigError;
}

function bearer(key: string): RequestInit {
  return { headers: { authorization: `Bearer ${key}` } };
}

/** An HTTP client that records any upstream call instead of making it. */
function recordingHttp(): HttpClient & { calls: number } {
  const http = {
    calls: 0,
    async request(): Promise<never> {
      http.calls++;
      throw new Error("no upstream call may be made in these tests");
    },
    async close() {},
  };
  return http;
}

function logCollector() {
  const lines: string[] = [];
  const logger = createLogger({ level: "info", write: (text) => lines.push(text) });
  return { logger, text: () => (logger.flush(), lines.join("")) };
}

describe("${VAR} substitution", () => {
  it("replaces variables in nested values and in array items", () => {
    const config = prepareConfig(
      {
        server: { host: "${HOST}" },
        auth: { api_keys: [{ key: "sk-${KEY_PART}-x", app: "app-${APP}" }] },
        providers: { echo: { plugin: "provider-echo", models: ["${MODEL_A}", "echo-${MODEL_B_SUFFIX}"] } },
      },
      { HOST: "127.0.0.2", KEY_PART: "abc", APP: "billing", MODEL_A: "echo-1", MODEL_B_SUFFIX: "2" },
    );
    expect(config.server?.host).toBe("127.0.0.2");
    expect(config.auth?.api_keys[0]).toEqual({ key: "sk-abc-x", app: "app-billing" });
    expect(config.providers.echo?.models).toEqual(["echo-1", "echo-2"]);
  });

  it("uses ${VAR:-default} when the variable is unset or empty, and the variable when it is set", () => {
    const raw = {
      server: { host: "${H:-127.0.0.1}", body_limit: "${B:-1mb}" },
      auth: { api_keys: [{ key: "${K:-}", generate_if_empty: true }] },
      providers: ECHO,
    };
    expect(prepareConfig(raw, {}).server).toEqual({ host: "127.0.0.1", body_limit: "1mb" });
    expect(prepareConfig(raw, { H: "", B: "" }).server).toEqual({ host: "127.0.0.1", body_limit: "1mb" });
    expect(prepareConfig(raw, { H: "0.0.0.0", B: "2mb" }).server).toEqual({ host: "0.0.0.0", body_limit: "2mb" });
    expect(prepareConfig(raw, {}).auth?.api_keys[0]?.key).toBe("");
  });

  it("never substitutes in keys", () => {
    const config = prepareConfig({ ...testConfig(ECHO), aliases: { "${ALIAS}": "echo/echo-1" } }, { ALIAS: "renamed" });
    expect(Object.keys(config.aliases ?? {})).toEqual(["${ALIAS}"]);
  });

  it("refuses an unset ${VAR} without default with a ConfigError naming the path and the variable", () => {
    const error = configError(() =>
      prepareConfig({ ...testConfig({ echo: { plugin: "provider-echo", models: ["echo-1", "${MODEL_B}"] } }) }, {}),
    );
    expect(error.message).toMatch(/^providers\.echo\.models\[1\]: environment variable MODEL_B is not set/);
  });

  it("prefixes the unset-variable error with the file path when read from a file", () => {
    const file = writeConfig("unset.yaml", `auth:\n  api_keys:\n    - key: \${MY_UNSET_KEY}\n${ECHO_YAML}`);
    const error = configError(() => loadConfigFile(file, {}));
    expect(error.message).toBe(
      `${file}: auth.api_keys[0].key: environment variable MY_UNSET_KEY is not set or is empty (write \${MY_UNSET_KEY:-default} to give a default)`,
    );
  });

  it("coerces substituted values by the schema: a port becomes an integer, a digit-only key stays a string", () => {
    const file = writeConfig(
      "coerce.yaml",
      "server:\n  port: ${P}\nauth:\n  api_keys:\n    - key: ${K}\nproviders:\n  echo:\n    plugin: provider-echo\n    models: [echo-1]\n",
    );
    const { config } = loadConfigFile(file, { P: "18080", K: "12345678" });
    expect(config.server?.port).toBe(18080);
    expect(config.auth?.api_keys[0]?.key).toBe("12345678");
  });

  it("accepts a digit-only key from the environment as a Bearer key", async () => {
    const env = { K: "12345678" };
    const router = await createRouter({ auth: { api_keys: [{ key: "${K}" }] }, providers: ECHO }, { env, logger: silentLogger() });
    try {
      expect((await router.fetch(new Request("http://x/v1/models", bearer("12345678")))).status).toBe(200);
      expect((await router.fetch(new Request("http://x/v1/models", bearer("12345679")))).status).toBe(401);
    } finally {
      await router.close();
    }
  });
});

describe("loadConfigFile", () => {
  it("returns the config with the absolute path and folder of the file", () => {
    mkdirSync(join(dir, "nested"), { recursive: true });
    const file = writeConfig("nested/ok.yaml", `auth:\n  api_keys:\n    - key: sk-file\n${ECHO_YAML}`);
    const loaded = loadConfigFile(file, {});
    expect(loaded).toMatchObject({ path: file, baseDir: join(dir, "nested") });
    expect(loaded.config.providers.echo?.models).toEqual(["echo-1"]);
  });

  it("reports invalid YAML with the file path", () => {
    const file = writeConfig("broken.yaml", "providers:\n  echo:\n   plugin: [unclosed\n");
    expect(configError(() => loadConfigFile(file, {})).message).toMatch(new RegExp(`^${escape(file)}: invalid YAML: `));
  });

  it("reports duplicate keys as invalid YAML", () => {
    const file = writeConfig("dupe.yaml", "providers: {}\nproviders: {}\n");
    expect(configError(() => loadConfigFile(file, {})).message).toMatch(/invalid YAML: Map keys must be unique/);
  });

  it.each([
    ["a list", "- a\n- b\n"],
    ["a scalar", "just text\n"],
    ["an empty file", ""],
  ])("refuses a file that is %s, not a mapping", (_kind, text) => {
    const file = writeConfig(`not-mapping-${text.length}.yaml`, text);
    expect(configError(() => loadConfigFile(file, {})).message).toBe(`${file}: the config must be a YAML mapping`);
  });

  it("reports a missing or unreadable file with its path and the error code", () => {
    const missing = join(dir, "does-not-exist.yaml");
    expect(configError(() => loadConfigFile(missing, {})).message).toBe(`cannot read config file ${missing} (ENOENT)`);
    expect(configError(() => loadConfigFile(dir, {})).message).toBe(`cannot read config file ${dir} (EISDIR)`);
  });

  it("prefixes schema errors with the file path", () => {
    const file = writeConfig("port.yaml", `server:\n  port: 70000\n${ECHO_YAML}`);
    expect(configError(() => loadConfigFile(file, {})).message).toBe(`${file}: server.port: must be <= 65535`);
  });
});

describe("schema errors name their path", () => {
  it.each<[string, unknown, string | RegExp]>([
    ["server.port out of range", { ...testConfig(ECHO), server: { port: 70000 } }, "server.port: must be <= 65535"],
    ["server.port negative", { ...testConfig(ECHO), server: { port: -1 } }, "server.port: must be >= 0"],
    ["server.port not a number", { ...testConfig(ECHO), server: { port: "eighty" } }, "server.port: must be an integer"],
    ["providers missing", { auth: { api_keys: [{ key: "k" }] } }, "providers: is required"],
    ["providers empty", testConfig({}), "providers: must have at least 1 property"],
    ["a provider's models empty", testConfig({ x: { plugin: "provider-echo", models: [] } }), "providers.x.models: must have at least 1 item"],
    ["a provider without plugin", testConfig({ x: { models: ["m"] } as never }), "providers.x.plugin: is required"],
    ["an unknown top-level key", { ...testConfig(ECHO), databse: {} }, "databse: is not a known field"],
    ["an unknown server key", { ...testConfig(ECHO), server: { prot: 1 } }, "server.prot: is not a known field; did you mean port?"],
    ["an alias target without provider", { ...testConfig(ECHO), aliases: { fast: "echo-1" } }, /^aliases\.fast: must match the pattern/],
    ["a bad body_limit", { ...testConfig(ECHO), server: { body_limit: "ten megs" } }, /^server\.body_limit: /],
    ["a max_connections of 0", { ...testConfig(ECHO), server: { max_connections: 0 } }, "server.max_connections: must be >= 1"],
    ["a bad request_timeout", { ...testConfig(ECHO), server: { request_timeout: "soon" } }, /^server\.request_timeout: /],
    ["a bad write_timeout", { ...testConfig(ECHO), server: { write_timeout: "soon" } }, /^server\.write_timeout: /],
    ["a bad logging level", { ...testConfig(ECHO), logging: { level: "loud" } }, /^logging\.level: must be one of/],
    [
      "an unknown capability",
      testConfig({ x: { plugin: "provider-echo", models: ["m"], capabilities: { telepathy: true } } as never }),
      "providers.x.capabilities.telepathy: is not a known field",
    ],
    ["an empty api_keys list", { auth: { api_keys: [] }, providers: ECHO }, "auth.api_keys: must have at least 1 item"],
  ])("%s", (_name, raw, expected) => {
    const message = configError(() => prepareConfig(raw, {})).message;
    if (typeof expected === "string") expect(message).toBe(expected);
    else expect(message).toMatch(expected);
  });
});

describe("createRouter: resolving the config", () => {
  const withOpenAI = (extra: Partial<ModelmuxConfig> = {}): ModelmuxConfig =>
    testConfig(
      { ...ECHO, openai: { plugin: "provider-openai", requires_env: ["FAKE_OPENAI_KEY"], api_key: "${FAKE_OPENAI_KEY:-}", models: ["gpt-4o-mini"] } },
      { aliases: { fast: "openai/gpt-4o-mini", e: "echo/echo-1" }, ...extra },
    );

  it("skips a provider whose requires_env is unset, logs it, and drops its aliases", async () => {
    const log = logCollector();
    const router = await createRouter(withOpenAI(), { env: {}, logger: log.logger });
    try {
      expect(router.models.entries.map((m) => m.name)).toEqual(["echo/echo-1"]);
      expect(router.models.resolve("e").name).toBe("echo/echo-1");
      expect(() => router.models.resolve("fast")).toThrow(/fast/);
      expect(log.text()).toContain("provider 'openai' is off: FAKE_OPENAI_KEY is not set");
      expect(log.text()).toContain("aliases off with their provider: fast");
    } finally {
      await router.close();
    }
  });

  it("serves the provider and its aliases when requires_env is met", async () => {
    const http = recordingHttp();
    const router = await createRouter(withOpenAI(), { env: { FAKE_OPENAI_KEY: "sk-fake" }, logger: silentLogger(), http });
    try {
      expect(router.models.entries.map((m) => m.name)).toEqual(["echo/echo-1", "openai/gpt-4o-mini"]);
      expect(router.models.resolve("fast").name).toBe("openai/gpt-4o-mini");
      expect(http.calls).toBe(0);
    } finally {
      await router.close();
    }
  });

  it("refuses a config whose providers are all skipped", async () => {
    const config = testConfig({ openai: { plugin: "provider-openai", requires_env: ["FAKE_OPENAI_KEY"], models: ["gpt-4o-mini"] } });
    const error = await rejection(createRouter(config, { env: {}, logger: silentLogger() }));
    expect(error.message).toMatch(/^providers: no provider is on \(skipped for missing environment variables: openai\)/);
  });

  it("refuses an alias to a model the config does not name", async () => {
    const error = await rejection(createRouter(testConfig(ECHO, { aliases: { fast: "echo/echo-9" } }), { env: {}, logger: silentLogger() }));
    expect(error.message).toMatch(/^aliases\.fast: 'echo\/echo-9' is not a configured model/);
  });

  it("generates a key for an empty key with generate_if_empty, usable as a Bearer key", async () => {
    const config: ModelmuxConfig = { auth: { api_keys: [{ key: "${NO_SUCH_KEY:-}", generate_if_empty: true }] }, providers: ECHO };
    const router = await createRouter(config, { env: {}, logger: silentLogger() });
    try {
      expect(router.generatedKeys).toHaveLength(1);
      const key = router.generatedKeys[0]!.key;
      expect(key).toMatch(/^sk-modelmux-[A-Za-z0-9_-]{32}$/);
      const ok = await router.fetch(new Request("http://x/v1/models", bearer(key)));
      expect(ok.status).toBe(200);
      expect((await router.fetch(new Request("http://x/v1/models", bearer(`${key}x`)))).status).toBe(401);
      expect((await router.fetch(new Request("http://x/v1/models", bearer("")))).status).toBe(401);
    } finally {
      await router.close();
    }
    const other = await createRouter(config, { env: {}, logger: silentLogger() });
    expect(other.generatedKeys[0]!.key).not.toBe(router.generatedKeys[0]!.key);
    await other.close();
  });

  it("does not generate a key when one is configured", async () => {
    const router = await createRouter(testConfig(ECHO), { env: {}, logger: silentLogger() });
    expect(router.generatedKeys).toEqual([]);
    await router.close();
  });

  it("refuses an empty key without generate_if_empty, naming auth.api_keys[0].key", async () => {
    const config: ModelmuxConfig = { auth: { api_keys: [{ key: "${NO_SUCH_KEY:-}" }] }, providers: ECHO };
    const error = await rejection(createRouter(config, { env: {}, logger: silentLogger() }));
    expect(error.message).toMatch(/^auth\.api_keys\[0\]\.key: must not be empty/);
  });

  it("refuses a config without auth", async () => {
    const error = await rejection(createRouter({ providers: ECHO }, { env: {}, logger: silentLogger() }));
    expect(error.message).toMatch(/^auth: is required/);
  });

  it.each<[string, Partial<ModelmuxConfig> | ModelmuxConfig, RegExp]>([
    [
      "an auth.jwt.jwks_url over plain http to another machine",
      { auth: { api_keys: [{ key: TEST_KEY }], jwt: { issuer: "https://idp.test/", audience: "mm", jwks_url: "http://idp.test/jwks" } } },
      /^auth\.jwt\.jwks_url: must be an https URL \(plain http is allowed only for localhost, 127\.0\.0\.0\/8 and \[::1\]\)$/,
    ],
    ["a storage plugin with a bad option", { storage: { plugin: "provider-echo" } }, /^storage\.plugin: 'provider-echo' is a provider plugin, not a storage plugin/],
    ["a rate_limit.plugin of another kind", { rate_limit: { plugin: "provider-echo" } }, /^rate_limit\.plugin: 'provider-echo' is a provider plugin, not a rate-limit plugin$/],
  ])("refuses %s with a clear message", async (_section, extra, expected) => {
    const error = await rejection(createRouter(testConfig(ECHO, extra), { env: {}, logger: silentLogger() }));
    expect(error.message).toMatch(expected);
  });

  it("refuses a providers.<name>.rate_limit with an empty window, naming it", async () => {
    const config = testConfig({ echo: { plugin: "provider-echo", models: ["echo-1"], rate_limit: { requests: 10, window: "0s" } } });
    const error = await rejection(createRouter(config, { env: {}, logger: silentLogger() }));
    expect(error.message).toBe("providers.echo.rate_limit.window: must be longer than 0 (e.g. 60s)");
  });

  it("resolves server settings: defaults, sizes and durations", async () => {
    const defaults = await createRouter(testConfig(ECHO), { env: {}, logger: silentLogger() });
    expect(defaults.settings).toEqual({ host: "127.0.0.1", port: 8080, bodyLimit: 10 * 1024 ** 2, shutdownTimeoutMs: 10_000, requestTimeoutMs: 60_000, writeTimeoutMs: 60_000, maxConnections: 4096, upstreamBodyLimit: 64 * 1024 ** 2 });
    await defaults.close();
    const server = { host: "::1", port: 0, body_limit: "64kb", shutdown_timeout: "1500ms", request_timeout: "2m", write_timeout: "90s", max_connections: 10, upstream_body_limit: "256kb" };
    const set = await createRouter(testConfig(ECHO, { server }), { env: {}, logger: silentLogger() });
    expect(set.settings).toEqual({ host: "::1", port: 0, bodyLimit: 65_536, shutdownTimeoutMs: 1500, requestTimeoutMs: 120_000, writeTimeoutMs: 90_000, maxConnections: 10, upstreamBodyLimit: 262_144 });
    await set.close();
  });
});

describe("the built-in default config, config/modelmux.yaml", () => {
  async function modelIds(router: Awaited<ReturnType<typeof createRouter>>): Promise<string[]> {
    const response = await router.fetch(new Request("http://x/v1/models", bearer(router.generatedKeys[0]!.key)));
    expect(response.status).toBe(200);
    return ((await response.json()) as { data: Array<{ id: string }> }).data.map((m) => m.id);
  }

  it("serves only echo/echo-1 without OPENAI_API_KEY, with a generated key", async () => {
    const { config, baseDir } = loadConfigFile(DEFAULT_CONFIG_PATH, {});
    expect(config.server).toMatchObject({ host: "127.0.0.1", port: 8080 });
    const router = await createRouter(config, { baseDir, env: {}, logger: silentLogger(), http: recordingHttp() });
    try {
      expect(router.generatedKeys).toHaveLength(1);
      expect(await modelIds(router)).toEqual(["echo/echo-1", "echo"]);
      expect(router.models.resolve("echo").name).toBe("echo/echo-1");
      // The responses API, image generation and embeddings work offline on the echo provider.
      const key = router.generatedKeys[0]!.key;
      const post = (path: string, body: unknown) =>
        router.fetch(new Request(`http://x${path}`, { method: "POST", headers: { ...bearer(key).headers, "content-type": "application/json" }, body: JSON.stringify(body) }));
      const response = await post("/v1/responses", { model: "echo", input: "offline" });
      expect(response.status).toBe(200);
      expect(((await response.json()) as { output: Array<{ content: Array<{ text: string }> }> }).output[0]!.content[0]!.text).toBe("offline");
      const image = await post("/v1/images/generations", { model: "echo", prompt: "offline", response_format: "url" });
      expect(image.status).toBe(200);
      const embeddings = await post("/v1/embeddings", { model: "echo", input: "offline" });
      expect(embeddings.status).toBe(200);
    } finally {
      await router.close();
    }
  });

  it("also lists the openai models when OPENAI_API_KEY is set, without any upstream call", async () => {
    const env = { OPENAI_API_KEY: "sk-not-a-real-key", MODELMUX_API_KEY: "sk-chosen" };
    const { config, baseDir } = loadConfigFile(DEFAULT_CONFIG_PATH, env);
    const http = recordingHttp();
    const router = await createRouter(config, { baseDir, env, logger: silentLogger(), http });
    try {
      expect(router.generatedKeys).toEqual([]);
      const response = await router.fetch(new Request("http://x/v1/models", bearer("sk-chosen")));
      const ids = ((await response.json()) as { data: Array<{ id: string }> }).data.map((m) => m.id);
      expect(ids).toEqual(["echo/echo-1", "openai/gpt-4o-mini", "openai/gpt-4o", "openai/gpt-4.1-mini", "openai/gpt-image-1", "openai/text-embedding-3-small", "echo"]);
      expect(http.calls).toBe(0);
    } finally {
      await router.close();
    }
  });

  it("turns on anthropic and gemini with their key variables, each on its own", async () => {
    for (const [variable, prefix] of [["ANTHROPIC_API_KEY", "anthropic/"], ["GEMINI_API_KEY", "gemini/"]] as const) {
      const env = { [variable]: "not-a-real-key", MODELMUX_API_KEY: "sk-chosen" };
      const { raw, baseDir } = readConfigFile(DEFAULT_CONFIG_PATH);
      const http = recordingHttp();
      const router = await createRouter(raw, { baseDir, env, logger: silentLogger(), http });
      try {
        const response = await router.fetch(new Request("http://x/v1/models", bearer("sk-chosen")));
        const ids = ((await response.json()) as { data: Array<{ id: string }> }).data.map((m) => m.id);
        // The echo model, the provider's models, then the echo alias.
        expect(ids[0]).toBe("echo/echo-1");
        expect(ids.at(-1)).toBe("echo");
        expect(ids.slice(1, -1).length).toBeGreaterThan(0);
        expect(ids.slice(1, -1).every((id) => id.startsWith(prefix))).toBe(true);
        expect(http.calls).toBe(0);
      } finally {
        await router.close();
      }
    }
  });

  it("takes MODELMUX_PORT and MODELMUX_HOST from the environment", () => {
    const { config } = loadConfigFile(DEFAULT_CONFIG_PATH, { MODELMUX_PORT: "9191", MODELMUX_HOST: "0.0.0.0" });
    expect(config.server).toMatchObject({ host: "0.0.0.0", port: 9191 });
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
