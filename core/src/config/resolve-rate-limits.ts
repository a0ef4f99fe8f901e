/**
 * Resolves `rate_limit` and `providers.<name>.rate_limit` (README, "Rate limits") into the policy
 * the core applies: windows in ms, overrides in maps, budgets checked against `pricing`. Undefined
 * when the config sets no limit at all.
 */
import type { LimitSpec, RateLimitPolicy } from "../rate-limit/policy.ts";
import { appendKey } from "../validation/error-path.ts";
import { ConfigError, ConfigProblems } from "./config-error.ts";
import type { LimitConfig, ModelmuxConfig } from "./types.ts";
import { parseDuration } from "./units.ts";

/** The limiter plugin used when `rate_limit.plugin` is not set. */
export const DEFAULT_RATE_LIMIT_PLUGIN = "ratelimit-memory";

export interface ResolvedRateLimits {
  /** `rate_limit.plugin`, default `ratelimit-memory`. */
  plugin: string;
  options: Record<string, unknown>;
  policy: RateLimitPolicy;
}

/**
 * The providers with a price for at least one of their models: a budget counts priced models only
 * (README, "Budgets"), so one that could never count anything is refused rather than left to
 * admit everything.
 */
function pricedProviders(config: ModelmuxConfig): Set<string> {
  return new Set(Object.keys(config.pricing ?? {}).map((model) => model.slice(0, model.indexOf("/"))));
}

/** `provider` limits one provider's requests; undefined for an app's or a developer's. */
function limitSpec(limit: LimitConfig, path: string, priced: ReadonlySet<string>, provider?: string): LimitSpec {
  const windowMs = parseDuration(limit.window);
  if (!(windowMs > 0)) throw new ConfigError(`${path}.window: must be longer than 0 (e.g. 60s)`);
  if (limit.requests === undefined && limit.tokens === undefined && limit.cost === undefined) {
    throw new ConfigError(`${path}: must set requests, tokens or cost (at least one) besides window`);
  }
  const spec: LimitSpec = { windowMs };
  if (limit.requests !== undefined) spec.requests = limit.requests;
  if (limit.tokens !== undefined) spec.tokens = limit.tokens;
  if (limit.cost !== undefined) {
    if (provider === undefined ? priced.size === 0 : !priced.has(provider)) {
      const which = provider === undefined ? "no model" : `no model of provider '${provider}'`;
      throw new ConfigError(`${path}.cost: a budget counts the cost of priced models only, and pricing names ${which}: it would never count anything (add prices under pricing)`);
    }
    spec.cost = limit.cost;
  }
  return spec;
}

function overrides(entries: Record<string, LimitConfig | false> | undefined, path: string, priced: ReadonlySet<string>, problems: ConfigProblems): Map<string, LimitSpec | null> {
  const map = new Map<string, LimitSpec | null>();
  for (const [name, limit] of Object.entries(entries ?? {})) {
    const spec = limit === false ? null : problems.check(() => limitSpec(limit, appendKey(path, name), priced));
    if (spec !== undefined) map.set(name, spec);
  }
  return map;
}

/** @throws ConfigError naming every limit that is refused: a window of 0, no amount, a budget no price can count */
export function resolveRateLimits(config: ModelmuxConfig): ResolvedRateLimits | undefined {
  const block = config.rate_limit;
  const priced = pricedProviders(config);
  const problems = new ConfigProblems();
  const providers = new Map<string, LimitSpec>();
  for (const [name, provider] of Object.entries(config.providers)) {
    const spec = provider.rate_limit && problems.check(() => limitSpec(provider.rate_limit!, `providers.${name}.rate_limit`, priced, name));
    if (spec) providers.set(name, spec);
  }
  if (!block && providers.size === 0 && problems.count === 0) return undefined;
  const policy: RateLimitPolicy = {
    apps: overrides(block?.apps, "rate_limit.apps", priced, problems),
    developers: overrides(block?.developers, "rate_limit.developers", priced, problems),
    providers,
  };
  const app = block?.app && problems.check(() => limitSpec(block.app!, "rate_limit.app", priced));
  const developer = block?.developer && problems.check(() => limitSpec(block.developer!, "rate_limit.developer", priced));
  problems.throwIfAny();
  if (app) policy.app = app;
  if (developer) policy.developer = developer;
  return { plugin: block?.plugin ?? DEFAULT_RATE_LIMIT_PLUGIN, options: block?.options ?? {}, policy };
}
