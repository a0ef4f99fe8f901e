/**
 * A request's plan (README, "Routing and resilience"): a model or plain alias, then its own
 * fallbacks; a pool's pick by weight, the other members heaviest first, then the pick's fallbacks;
 * no target twice; a fallback's fallbacks never followed; unknown and switched-off names refused as
 * the model table refuses them.
 */
import { describe, expect, it } from "vitest";
import { ModelmuxError } from "../src/errors.ts";
import { buildModelTable, type ProviderModels } from "../src/models/model-table.ts";
import type { Provider } from "../src/plugin.ts";
import { createRoutePlanner } from "../src/routing/plan.ts";
import type { RoutingSettings } from "../src/routing/types.ts";

/** A seeded generator (mulberry32): the same draws on every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const provider = { capabilities: () => ({}) } as unknown as Provider;

function providerModels(name: string, ...ids: string[]): ProviderModels {
  return { provider: name, instance: provider, timeoutMs: 600_000, models: ids.map((id) => ({ id })) };
}

const PROVIDERS = [
  providerModels("openai", "gpt-4o", "gpt-4o-mini"),
  providerModels("azure", "gpt-4o"),
  providerModels("anthropic", "claude"),
  providerModels("gemini", "pro", "flash"),
];

/** Settings that tell the providers apart: `attempts` is the provider's position. */
function settingsOf(name: string): RoutingSettings {
  const attempts = PROVIDERS.findIndex((p) => p.provider === name);
  return {
    retry: { attempts, backoffMs: 250, maxBackoffMs: 8000, maxRetryAfterMs: 30_000 },
    timeouts: { connectMs: 5000, firstTokenMs: 30_000, idleMs: 30_000 },
    circuitBreaker: { failures: 5, cooldownMs: 10_000 },
  };
}

const models = buildModelTable(
  PROVIDERS,
  { fast: "openai/gpt-4o-mini" },
  new Map([["cohere/command", { provider: "cohere", variables: ["COHERE_KEY"] }]]),
  {
    smart: [
      { model: "openai/gpt-4o", weight: 3 },
      { model: "azure/gpt-4o", weight: 1 },
    ],
    trio: [
      { model: "gemini/flash", weight: 2 },
      { model: "anthropic/claude", weight: 5 },
      { model: "gemini/pro", weight: 3 },
    ],
    ties: [
      { model: "gemini/pro", weight: 1 },
      { model: "anthropic/claude", weight: 1 },
      { model: "azure/gpt-4o", weight: 1 },
    ],
  },
);

const planner = createRoutePlanner({
  models,
  settingsOf,
  fallbacks: {
    "openai/gpt-4o": ["anthropic/claude", "gemini/pro"],
    "openai/gpt-4o-mini": ["gemini/flash"],
    "azure/gpt-4o": ["openai/gpt-4o", "gemini/flash"],
    // A fallback's own fallbacks: never followed from another model's plan.
    "anthropic/claude": ["gemini/flash"],
  },
});

const names = (name: string, random?: () => number) => planner.plan(name, random).map((target) => target.entry.name);

describe("plan: a model or a plain alias", () => {
  it("is the model, then its own fallbacks, each with its provider's settings", () => {
    const plan = planner.plan("openai/gpt-4o");
    expect(plan.map((t) => t.entry.name)).toEqual(["openai/gpt-4o", "anthropic/claude", "gemini/pro"]);
    expect(plan.map((t) => t.settings.retry.attempts)).toEqual([0, 2, 3]);
  });

  it("does not follow a fallback's own fallbacks", () => {
    // anthropic/claude falls back to gemini/flash, but only when it is the model asked for.
    expect(names("openai/gpt-4o")).not.toContain("gemini/flash");
    expect(names("anthropic/claude")).toEqual(["anthropic/claude", "gemini/flash"]);
  });

  it("is the model alone when it has no fallbacks", () => {
    expect(names("gemini/pro")).toEqual(["gemini/pro"]);
  });

  it("plans a plain alias as its model", () => {
    expect(names("fast")).toEqual(["openai/gpt-4o-mini", "gemini/flash"]);
  });

  it("makes a model's plan once, frozen, so that no request can change another's", () => {
    const plan = planner.plan("openai/gpt-4o");
    expect(planner.plan("openai/gpt-4o")).toBe(plan);
    expect(Object.isFrozen(plan)).toBe(true);
    expect(names("openai/gpt-4o")).toHaveLength(3);
  });
});

describe("plan: a pool", () => {
  it("is the pick, the other members heaviest first, then the pick's fallbacks, none twice", () => {
    // smart is 3 : 1, so a draw below 0.75 picks openai/gpt-4o.
    expect(names("smart", () => 0.1)).toEqual(["openai/gpt-4o", "azure/gpt-4o", "anthropic/claude", "gemini/pro"]);
    // azure/gpt-4o's fallbacks are openai/gpt-4o (already in the plan) and gemini/flash.
    expect(names("smart", () => 0.8)).toEqual(["azure/gpt-4o", "openai/gpt-4o", "gemini/flash"]);
  });

  it("orders the other members by weight, whatever the config order, and keeps it for equal weights", () => {
    // trio: flash 2, claude 5, pro 3 (total 10); a draw of 0 picks flash, the first member.
    expect(names("trio", () => 0)).toEqual(["gemini/flash", "anthropic/claude", "gemini/pro"]);
    // 0.95 falls in pro's share (0.7–1): then claude (5), flash (2); pro has no fallbacks.
    expect(names("trio", () => 0.95)).toEqual(["gemini/pro", "anthropic/claude", "gemini/flash"]);
    // claude's own fallback, gemini/flash, is a member already.
    expect(names("trio", () => 0.5)).toEqual(["anthropic/claude", "gemini/pro", "gemini/flash"]);
    // ties: all 1; claude's fallbacks follow, azure/gpt-4o's (not picked) do not.
    expect(names("ties", () => 0.5)).toEqual(["anthropic/claude", "gemini/pro", "azure/gpt-4o", "gemini/flash"]);
  });

  it("picks each member in proportion to its weight over many draws", () => {
    const random = seeded(42);
    const draws = 20_000;
    const counts = new Map<string, number>();
    for (let i = 0; i < draws; i++) {
      const first = planner.plan("trio", random)[0]!.entry.name;
      counts.set(first, (counts.get(first) ?? 0) + 1);
    }
    expect((counts.get("anthropic/claude") ?? 0) / draws).toBeCloseTo(0.5, 1);
    expect((counts.get("gemini/pro") ?? 0) / draws).toBeCloseTo(0.3, 1);
    expect((counts.get("gemini/flash") ?? 0) / draws).toBeCloseTo(0.2, 1);
  });

  it("picks by weight when the model table resolves the pool too", () => {
    expect(models.resolve("smart", () => 0.74).name).toBe("openai/gpt-4o");
    expect(models.resolve("smart", () => 0.75).name).toBe("azure/gpt-4o");
  });
});

describe("plan: names it cannot plan", () => {
  function thrown(fn: () => unknown): ModelmuxError {
    try {
      fn();
    } catch (error) {
      expect(error).toBeInstanceOf(ModelmuxError);
      return error as ModelmuxError;
    }
    throw new Error("nothing was thrown");
  }

  it.each(["openai/gpt-5", "smartest", "cohere/command"])("refuses %s with the model table's 404", (name) => {
    const error = thrown(() => planner.plan(name));
    const expected = thrown(() => models.resolve(name));
    expect(error.status).toBe(404);
    expect(error.code).toBe("model_not_found");
    expect(error.message).toBe(expected.message);
  });
});
