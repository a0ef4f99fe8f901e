/**
 * `routing`, `fallbacks` and pool aliases, resolved once at start (README, "Routing and
 * resilience"): each provider's settings (the defaults, then `routing`'s, then the provider
 * block's), every fallback and pool member checked against the configured models, and the models of
 * providers that are off left out with a log line rather than an error.
 */
import type { Weighted } from "../models/weighted-pool.ts";
import type { RoutingSettings } from "../routing/types.ts";
import { appendKey } from "../validation/error-path.ts";
import { ConfigError, ConfigProblems } from "./config-error.ts";
import type { Duration, ModelmuxConfig, RoutingConfig } from "./types.ts";
import { parseTimer } from "./units.ts";

/** The settings of a provider that neither `routing` nor its block changes. */
export const ROUTING_DEFAULTS = {
  retry: { attempts: 2, backoff: "250ms", max_backoff: "8s", max_retry_after: "30s" },
  timeouts: { connect: "5s", first_token: "30s", idle: "30s" },
  circuit_breaker: { failures: 5, cooldown: "10s" },
} as const satisfies { [S in keyof RoutingConfig]-?: Required<NonNullable<RoutingConfig[S]>> };

export interface ResolvedRouting {
  /** The settings of a configured provider; `routing`'s (over the defaults) for a name the config lacks. */
  settingsOf(provider: string): RoutingSettings;
  /** `provider/model` → the served models tried after it, in order, none twice and never itself. */
  fallbacks: Record<string, string[]>;
  /** Pool alias → its served members (`provider/model`, weight > 0); a pool with none is left out. */
  pools: Record<string, Weighted<string>[]>;
  /** What was left out because its provider is off, for one log line: `fallbacks["a/b"]`, `azure/gpt-4o in aliases.smart`. */
  dropped: string[];
}

/**
 * Resolves the routing config.
 * @param served The providers that are on; the models of the others are left out, never an error.
 * @throws ConfigError naming the path and the fix of each problem: an unknown model in `fallbacks`
 *   or a pool, a model listed among its own fallbacks, a pool member listed twice or with a weight
 *   ≤ 0, a timeout past 24d.
 */
export function resolveRouting(config: ModelmuxConfig, served: ReadonlySet<string>): ResolvedRouting {
  const problems = new ConfigProblems();
  // `routing`'s own settings first: a provider's problem is its own, not one `routing` already had.
  const base = problems.check(() => resolveSettings(config, undefined));
  const settings = new Map<string, RoutingSettings>();
  for (const provider of Object.keys(config.providers)) {
    const resolved = problems.check(() => resolveSettings(config, provider));
    if (resolved) settings.set(provider, resolved);
  }
  const dropped: string[] = [];
  const names = knownNames(config);
  const isServed = (model: string) => served.has(model.slice(0, model.indexOf("/")));
  const fallbacks = resolveFallbacks(config, names, isServed, dropped, problems);
  const pools = resolvePools(config, names, isServed, dropped, problems);
  problems.throwIfAny();
  return { settingsOf: (provider) => settings.get(provider) ?? base!, fallbacks, pools, dropped };
}

type Section = keyof RoutingConfig;
type Values = Readonly<Record<string, Duration | undefined>>;

/** Each setting from the first layer that has it: the provider block, `routing`, the defaults. */
function resolveSettings(config: ModelmuxConfig, provider: string | undefined): RoutingSettings {
  const block = provider === undefined ? undefined : config.providers[provider];
  function read(section: Section, key: string): { value: Duration; path: string } {
    const layers: Array<[path: string, values: Values | undefined]> = [
      [block ? `${appendKey("providers", provider!)}.${section}` : "", block?.[section] as Values | undefined],
      [`routing.${section}`, config.routing?.[section] as Values | undefined],
    ];
    for (const [path, values] of layers) {
      const value = values?.[key];
      if (value !== undefined) return { value, path: `${path}.${key}` };
    }
    return { value: (ROUTING_DEFAULTS[section] as Values)[key]!, path: `routing.${section}.${key}` };
  }
  const timer = (section: Section, key: string) => {
    const { value, path } = read(section, key);
    return parseTimer(value, path);
  };
  // The schema made these integers.
  const count = (section: Section, key: string) => read(section, key).value as number;
  return {
    retry: {
      attempts: count("retry", "attempts"),
      backoffMs: timer("retry", "backoff"),
      maxBackoffMs: timer("retry", "max_backoff"),
      maxRetryAfterMs: timer("retry", "max_retry_after"),
    },
    timeouts: { connectMs: timer("timeouts", "connect"), firstTokenMs: timer("timeouts", "first_token"), idleMs: timer("timeouts", "idle") },
    circuitBreaker: { failures: count("circuit_breaker", "failures"), cooldownMs: timer("circuit_breaker", "cooldown") },
  };
}

interface KnownNames {
  /** Every `provider/model` the config lists, of providers on or off. */
  models: ReadonlySet<string>;
  /** Plain alias → `provider/model`. */
  aliases: ReadonlyMap<string, string>;
  /** The names of pool aliases. */
  pools: ReadonlySet<string>;
}

function knownNames(config: ModelmuxConfig): KnownNames {
  const models = new Set(
    Object.entries(config.providers).flatMap(([name, block]) => block.models.map((m) => `${name}/${typeof m === "string" ? m : m.id}`)),
  );
  const aliases = new Map<string, string>();
  const pools = new Set<string>();
  for (const [alias, value] of Object.entries(config.aliases ?? {})) {
    if (typeof value === "string") aliases.set(alias, value);
    else pools.add(alias);
  }
  return { models, aliases, pools };
}

const MODEL_HINT = "name one of providers.<name>.models as 'provider/model', or a plain alias of one";

/** The `provider/model` a key or item of `fallbacks` names. */
function fallbackModel(name: string, path: string, names: KnownNames): string {
  if (names.pools.has(name)) {
    throw new ConfigError(`${path}: '${name}' is a pool (loadbalance); fallbacks name models: list its members instead`);
  }
  const model = names.aliases.get(name) ?? name;
  if (!names.models.has(model)) throw new ConfigError(`${path}: '${name}' is not a configured model (${MODEL_HINT})`);
  return model;
}

function resolveFallbacks(config: ModelmuxConfig, names: KnownNames, isServed: (model: string) => boolean, dropped: string[], problems: ConfigProblems) {
  const fallbacks: Record<string, string[]> = {};
  const listedAt = new Map<string, string>();
  for (const [key, list] of Object.entries(config.fallbacks ?? {})) {
    const keyPath = appendKey("fallbacks", key);
    const model = problems.check(() => fallbackModel(key, keyPath, names));
    const earlier = model && listedAt.get(model);
    if (earlier) problems.add(`${keyPath}: names ${model}, as ${earlier} does; keep one list per model`);
    else if (model) listedAt.set(model, keyPath);
    const targets: string[] = [];
    const off: string[] = [];
    list.forEach((name, i) => {
      const path = `${keyPath}[${i}]`;
      const target = problems.check(() => fallbackModel(name, path, names));
      if (target === undefined) return;
      if (target === model) {
        const via = name === model ? "" : ` (an alias of ${model})`;
        return problems.add(`${path}: '${name}' is the model the list is for${via}; list other models, tried in order when it fails`);
      }
      if (!isServed(target)) off.push(`${name} in ${keyPath}`);
      else if (!targets.includes(target)) targets.push(target);
    });
    if (!model || earlier) continue;
    if (!isServed(model)) dropped.push(keyPath);
    else {
      dropped.push(...off);
      fallbacks[model] = targets;
    }
  }
  return fallbacks;
}

function resolvePools(config: ModelmuxConfig, names: KnownNames, isServed: (model: string) => boolean, dropped: string[], problems: ConfigProblems) {
  const pools: Record<string, Weighted<string>[]> = {};
  for (const [alias, value] of Object.entries(config.aliases ?? {})) {
    if (typeof value === "string") continue;
    const poolPath = appendKey("aliases", alias);
    const members: Weighted<string>[] = [];
    const off: string[] = [];
    value.loadbalance.forEach(({ model, weight = 1 }, i) => {
      const path = `${poolPath}.loadbalance[${i}]`;
      if (!(Number.isFinite(weight) && weight > 0)) {
        return problems.add(`${path}.weight: must be a number more than 0 (the member's share of the pool's requests, e.g. 1); remove a member that should get none`);
      }
      if (!names.models.has(model)) {
        return problems.add(`${path}.model: '${model}' is not a configured model (name one of providers.<name>.models as 'provider/model')`);
      }
      if (value.loadbalance.slice(0, i).some((earlier) => earlier.model === model)) {
        return problems.add(`${path}.model: '${model}' is already a member of this pool; list it once, with the weights added up`);
      }
      if (isServed(model)) members.push({ model, weight });
      else off.push(`${model} in ${poolPath}`);
    });
    if (members.length > 0) {
      pools[alias] = members;
      dropped.push(...off);
    } else dropped.push(poolPath);
  }
  return pools;
}
