/**
 * The routing config (README, "Routing and resilience"): `routing`, a provider block's overrides,
 * `fallbacks` and pool aliases, checked and resolved at start. Every refusal names its path; the
 * models of a provider that is off are left out of fallbacks and pools with a log line.
 */
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { createRouter, type ModelmuxConfig } from "@modelmux/core";
import { ConfigError } from "../core/src/config/config-error.ts";
import { prepareConfig } from "../core/src/config/load-config.ts";
import { resolveRouting, ROUTING_DEFAULTS } from "../core/src/config/resolve-routing.ts";
import { createLogger } from "../core/src/logger.ts";
import { postJson, silentLogger, TEST_KEY, testConfig } from "./helpers/harness.ts";

// The README's example, as written there.
const EXAMPLE = `
routing:                          # defaults; a provider block may override retry, timeouts, circuit_breaker
  retry:
    attempts: 2                   # extra tries of the same target after its first (0 = none)
    backoff: 250ms                # first wait; doubles each try, full jitter
    max_backoff: 8s
    max_retry_after: 30s          # a provider's Retry-After up to this is waited; longer: next target at once
  timeouts:
    connect: 5s
    first_token: 30s              # streams: first content; past it the next target is tried, if any
    idle: 30s                     # streams: silence between events; past it the attempt has failed
  circuit_breaker:
    failures: 5                   # consecutive retryable failures of one target open its circuit
    cooldown: 10s                 # then one probe request goes through; success closes the circuit
fallbacks:                        # ordered alternatives, tried when a model fails with a retryable error
  openai/gpt-4o: [anthropic/claude-sonnet-4-5, gemini/gemini-2.5-pro]
aliases:
  fast: openai/gpt-4o-mini        # plain alias, as before
  smart:                          # a weighted pool: one picked per request, the others are its fallbacks
    loadbalance:
      - { model: openai/gpt-4o, weight: 3 }
      - { model: azure/gpt-4o, weight: 1 }
`;

/** Echo providers under the example's provider names: no key, no network. */
const PROVIDERS: ModelmuxConfig["providers"] = {
  openai: { plugin: "provider-echo", models: ["gpt-4o", "gpt-4o-mini"] },
  azure: { plugin: "provider-echo", models: ["gpt-4o"] },
  anthropic: { plugin: "provider-echo", models: ["claude-sonnet-4-5"] },
  gemini: { plugin: "provider-echo", models: ["gemini-2.5-pro"] },
};

function example(extra: Partial<ModelmuxConfig> = {}, providers = PROVIDERS): ModelmuxConfig {
  return { ...testConfig(providers), ...(parse(EXAMPLE) as Partial<ModelmuxConfig>), ...extra };
}

const ALL = new Set(Object.keys(PROVIDERS));

/** Validates and resolves, and returns the ConfigError thrown (fails the test when none is). */
function refusal(config: ModelmuxConfig): string {
  try {
    resolveRouting(prepareConfig(config, {}), ALL);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error("expected a ConfigError, nothing was thrown");
}

describe("the routing config", () => {
  it("accepts the README's example verbatim and resolves it to the defaults", () => {
    const routing = resolveRouting(prepareConfig(example(), {}), ALL);
    const expected = {
      retry: { attempts: 2, backoffMs: 250, maxBackoffMs: 8000, maxRetryAfterMs: 30_000 },
      timeouts: { connectMs: 5000, firstTokenMs: 30_000, idleMs: 30_000 },
      circuitBreaker: { failures: 5, cooldownMs: 10_000 },
    };
    expect(routing.settingsOf("openai")).toEqual(expected);
    // The example's values are the defaults: a config without `routing` resolves the same.
    expect(resolveRouting(prepareConfig(testConfig(PROVIDERS), {}), ALL).settingsOf("azure")).toEqual(expected);
    expect(routing.fallbacks).toEqual({ "openai/gpt-4o": ["anthropic/claude-sonnet-4-5", "gemini/gemini-2.5-pro"] });
    expect(routing.pools).toEqual({
      smart: [
        { model: "openai/gpt-4o", weight: 3 },
        { model: "azure/gpt-4o", weight: 1 },
      ],
    });
    expect(routing.dropped).toEqual([]);
    expect(ROUTING_DEFAULTS.retry.attempts).toBe(2);
  });

  it("merges a provider block's partial overrides over routing's, key by key", () => {
    const config = example(
      { routing: { retry: { attempts: 0, backoff: "1s" }, timeouts: { idle: 5 } } },
      {
        ...PROVIDERS,
        anthropic: {
          plugin: "provider-echo",
          models: ["claude-sonnet-4-5"],
          retry: { attempts: 4 },
          timeouts: { first_token: "90s" },
          circuit_breaker: { cooldown: "1m" },
        },
      },
    );
    const routing = resolveRouting(prepareConfig(config, {}), ALL);
    expect(routing.settingsOf("anthropic")).toEqual({
      retry: { attempts: 4, backoffMs: 1000, maxBackoffMs: 8000, maxRetryAfterMs: 30_000 },
      timeouts: { connectMs: 5000, firstTokenMs: 90_000, idleMs: 5000 },
      circuitBreaker: { failures: 5, cooldownMs: 60_000 },
    });
    expect(routing.settingsOf("openai").retry).toEqual({ attempts: 0, backoffMs: 1000, maxBackoffMs: 8000, maxRetryAfterMs: 30_000 });
  });

  it("takes plain aliases in fallbacks, as keys and as items, and lists each model once", () => {
    const routing = resolveRouting(
      prepareConfig(example({ fallbacks: { fast: ["openai/gpt-4o", "anthropic/claude-sonnet-4-5"], "azure/gpt-4o": ["fast", "openai/gpt-4o-mini"] } }), {}),
      ALL,
    );
    expect(routing.fallbacks).toEqual({
      "openai/gpt-4o-mini": ["openai/gpt-4o", "anthropic/claude-sonnet-4-5"],
      "azure/gpt-4o": ["openai/gpt-4o-mini"],
    });
  });

  it.each<[string, ModelmuxConfig, string]>([
    [
      "a fallback naming an unknown model",
      example({ fallbacks: { "openai/gpt-4o": ["anthropic/claude-9"] } }),
      `fallbacks["openai/gpt-4o"][0]: 'anthropic/claude-9' is not a configured model (name one of providers.<name>.models as 'provider/model', or a plain alias of one)`,
    ],
    [
      "a fallbacks key naming an unknown model",
      example({ fallbacks: { "openai/gpt-5": ["openai/gpt-4o"] } }),
      `fallbacks["openai/gpt-5"]: 'openai/gpt-5' is not a configured model (name one of providers.<name>.models as 'provider/model', or a plain alias of one)`,
    ],
    [
      "a fallback list containing its own key",
      example({ fallbacks: { "openai/gpt-4o": ["azure/gpt-4o", "openai/gpt-4o"] } }),
      `fallbacks["openai/gpt-4o"][1]: 'openai/gpt-4o' is the model the list is for; list other models, tried in order when it fails`,
    ],
    [
      "a fallback list containing its key's model through an alias",
      example({ fallbacks: { fast: ["openai/gpt-4o-mini"] } }),
      `fallbacks.fast[0]: 'openai/gpt-4o-mini' is the model the list is for; list other models, tried in order when it fails`,
    ],
    [
      "a fallback list containing an alias of its key",
      example({ fallbacks: { "openai/gpt-4o-mini": ["azure/gpt-4o", "fast"] } }),
      `fallbacks["openai/gpt-4o-mini"][1]: 'fast' is the model the list is for (an alias of openai/gpt-4o-mini); list other models, tried in order when it fails`,
    ],
    [
      "a fallback naming a pool",
      example({ fallbacks: { "openai/gpt-4o-mini": ["smart"] } }),
      `fallbacks["openai/gpt-4o-mini"][0]: 'smart' is a pool (loadbalance); fallbacks name models: list its members instead`,
    ],
    [
      "a fallbacks key naming a pool",
      example({ fallbacks: { smart: ["gemini/gemini-2.5-pro"] } }),
      `fallbacks.smart: 'smart' is a pool (loadbalance); fallbacks name models: list its members instead`,
    ],
    [
      "two lists for one model",
      example({ fallbacks: { "openai/gpt-4o-mini": ["openai/gpt-4o"], fast: ["azure/gpt-4o"] } }),
      `fallbacks.fast: names openai/gpt-4o-mini, as fallbacks["openai/gpt-4o-mini"] does; keep one list per model`,
    ],
    [
      "a pool member naming an unknown model",
      example({ aliases: { smart: { loadbalance: [{ model: "openai/gpt-4o" }, { model: "azure/gpt-5" }] } } }),
      `aliases.smart.loadbalance[1].model: 'azure/gpt-5' is not a configured model (name one of providers.<name>.models as 'provider/model')`,
    ],
    [
      "a pool member listed twice",
      example({ aliases: { smart: { loadbalance: [{ model: "openai/gpt-4o" }, { model: "openai/gpt-4o", weight: 2 }] } } }),
      `aliases.smart.loadbalance[1].model: 'openai/gpt-4o' is already a member of this pool; list it once, with the weights added up`,
    ],
    [
      "a pool member of weight 0",
      example({ aliases: { smart: { loadbalance: [{ model: "openai/gpt-4o", weight: 0 }] } } }),
      `aliases.smart.loadbalance[0].weight: must be a number more than 0 (the member's share of the pool's requests, e.g. 1); remove a member that should get none`,
    ],
    [
      "a pool member of negative weight",
      example({ aliases: { smart: { loadbalance: [{ model: "openai/gpt-4o", weight: -2 }] } } }),
      `aliases.smart.loadbalance[0].weight: must be a number more than 0 (the member's share of the pool's requests, e.g. 1); remove a member that should get none`,
    ],
    ["an empty pool", example({ aliases: { smart: { loadbalance: [] } } }), "aliases.smart.loadbalance: must have at least 1 item"],
    ["an unknown key in a pool member", example({ aliases: { smart: { loadbalance: [{ model: "openai/gpt-4o", wieght: 2 } as never] } } }), "aliases.smart.loadbalance[0].wieght: is not a known field; did you mean weight?"],
    ["an unknown key in routing", example({ routing: { retries: {} } as never }), "routing.retries: is not a known field"],
    ["an unknown key in routing.retry", example({ routing: { retry: { attempt: 1 } as never } }), "routing.retry.attempt: is not a known field; did you mean attempts?"],
    [
      "an unknown key in a provider's override",
      example({}, { ...PROVIDERS, azure: { plugin: "provider-echo", models: ["gpt-4o"], circuit_breaker: { failure: 3 } as never } }),
      "providers.azure.circuit_breaker.failure: is not a known field; did you mean failures?",
    ],
    ["negative attempts", example({ routing: { retry: { attempts: -1 } } }), "routing.retry.attempts: must be >= 0"],
    ["a circuit breaker of 0 failures", example({ routing: { circuit_breaker: { failures: 0 } } }), "routing.circuit_breaker.failures: must be >= 1"],
    [
      "a backoff that is no duration",
      example({ routing: { retry: { backoff: "soon" } } }),
      "routing.retry.backoff: must be a duration: a number of seconds or a string like 60s, 5m, 12h, 30d (units ms, s, m, h, d)",
    ],
    [
      "a provider's timeout past what a timer holds",
      example({}, { ...PROVIDERS, gemini: { plugin: "provider-echo", models: ["gemini-2.5-pro"], timeouts: { idle: "30d" } } }),
      "providers.gemini.timeouts.idle: must be at most 24d (the longest timer Node.js can set)",
    ],
    ["a routing timeout past what a timer holds", example({ routing: { circuit_breaker: { cooldown: "25d" } } }), "routing.circuit_breaker.cooldown: must be at most 24d (the longest timer Node.js can set)"],
  ])("refuses %s, naming the path", (_name, config, expected) => {
    expect(refusal(config)).toBe(expected);
  });
});

describe("createRouter with routing", () => {
  const request = { messages: [{ role: "user", content: "hi" }] };

  it("serves a pool alias through one of its members", async () => {
    const router = await createRouter(example(), { env: {}, logger: silentLogger() });
    try {
      expect(["openai/gpt-4o", "azure/gpt-4o"]).toContain(router.models.resolve("smart").name);
      expect(router.models.resolve("smart", () => 0.9).name).toBe("azure/gpt-4o");
      const reply = await router.fetch(new Request("http://modelmux.test/v1/chat/completions", postJson({ model: "smart", ...request })));
      expect(reply.status).toBe(200);
      expect(((await reply.json()) as { model: string }).model).toBe("gpt-4o");
    } finally {
      await router.close();
    }
  });

  it("refuses a bad fallback at start, naming it", async () => {
    const config = example({ fallbacks: { "openai/gpt-4o": ["openai/gpt-5"] } });
    const error = await createRouter(config, { env: {}, logger: silentLogger() }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/^fallbacks\["openai\/gpt-4o"\]\[0\]: 'openai\/gpt-5' is not a configured model/);
  });

  it("leaves the models of a provider that is off out of fallbacks and pools, with a log line", async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: "info", write: (text) => lines.push(text) });
    const off = { requires_env: ["AZURE_TEST_KEY"] };
    const providers = {
      ...PROVIDERS,
      azure: { ...PROVIDERS.azure!, ...off },
      gemini: { ...PROVIDERS.gemini!, ...off },
    };
    const config = example(
      {
        fallbacks: { "openai/gpt-4o": ["anthropic/claude-sonnet-4-5", "gemini/gemini-2.5-pro"], "gemini/gemini-2.5-pro": ["openai/gpt-4o"] },
        aliases: {
          smart: { loadbalance: [{ model: "openai/gpt-4o", weight: 3 }, { model: "azure/gpt-4o" }] },
          cloudy: { loadbalance: [{ model: "azure/gpt-4o" }, { model: "gemini/gemini-2.5-pro" }] },
        },
      },
      providers,
    );
    const router = await createRouter(config, { env: {}, logger });
    try {
      logger.flush();
      expect(lines.join("")).toContain(
        `left out of fallbacks and pools with their provider: gemini/gemini-2.5-pro in fallbacks["openai/gpt-4o"], fallbacks["gemini/gemini-2.5-pro"], azure/gpt-4o in aliases.smart, aliases.cloudy`,
      );
      expect(router.models.resolve("smart", () => 0.99).name).toBe("openai/gpt-4o");
      // A pool whose every member is off answers like a model that is off.
      const reply = await router.fetch(new Request("http://modelmux.test/v1/chat/completions", postJson({ model: "cloudy", ...request })));
      expect(reply.status).toBe(404);
      const body = (await reply.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("model_not_found");
      expect(body.error.message).toContain("The model 'cloudy' is off: its provider 'azure' requires AZURE_TEST_KEY");
    } finally {
      await router.close();
    }
  });

  it("lists the models, then the plain alias and the pool, each marked as such", async () => {
    const router = await createRouter(example(), { env: {}, logger: silentLogger() });
    try {
      const reply = await router.fetch(new Request("http://modelmux.test/v1/models", { headers: { authorization: `Bearer ${TEST_KEY}` } }));
      const data = ((await reply.json()) as { data: Array<{ id: string; modelmux_kind: string }> }).data;
      expect(data.map((m) => [m.id, m.modelmux_kind])).toEqual([
        ["openai/gpt-4o", "model"],
        ["openai/gpt-4o-mini", "model"],
        ["azure/gpt-4o", "model"],
        ["anthropic/claude-sonnet-4-5", "model"],
        ["gemini/gemini-2.5-pro", "model"],
        ["fast", "alias"],
        ["smart", "pool"],
      ]);
    } finally {
      await router.close();
    }
  });
});
