/**
 * Resolves `rate_limit` and `providers.<name>.rate_limit` (README, "Rate limits") into the policy
 * the core applies: windows in ms, overrides in maps. Undefined when the config sets no limit at
 * all.
 */
import type { LimitSpec, RateLimitPolicy } from "../rate-limit/policy.ts";
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

function limitSpec(limit: LimitConfig, path: string): LimitSpec {
  const windowMs = parseDuration(limit.window);
  if (!(windowMs > 0)) throw new ConfigError(`${path}.window: must be longer than 0 (e.g. 60s)`);
  const spec: LimitSpec = { requests: limit.requests, windowMs };
  if (limit.tokens !== undefined) spec.tokens = limit.tokens;
  return spec;
}

function overrides(entries: Record<string, LimitConfig | false> | undefined, path: string, problems: ConfigProblems): Map<string, LimitSpec | null> {
  const map = new Map<string, LimitSpec | null>();
  for (const [name, limit] of Object.entries(entries ?? {})) {
    const spec = limit === false ? null : problems.check(() => limitSpec(limit, `${path}.${name}`));
    if (spec !== undefined) map.set(name, spec);
  }
  return map;
}

/** @throws ConfigError naming every limit whose window is 0 */
export function resolveRateLimits(config: ModelmuxConfig): ResolvedRateLimits | undefined {
  const block = config.rate_limit;
  const problems = new ConfigProblems();
  const providers = new Map<string, LimitSpec>();
  for (const [name, provider] of Object.entries(config.providers)) {
    const spec = provider.rate_limit && problems.check(() => limitSpec(provider.rate_limit!, `providers.${name}.rate_limit`));
    if (spec) providers.set(name, spec);
  }
  if (!block && providers.size === 0 && problems.count === 0) return undefined;
  const policy: RateLimitPolicy = {
    apps: overrides(block?.apps, "rate_limit.apps", problems),
    developers: overrides(block?.developers, "rate_limit.developers", problems),
    providers,
  };
  const app = block?.app && problems.check(() => limitSpec(block.app!, "rate_limit.app"));
  const developer = block?.developer && problems.check(() => limitSpec(block.developer!, "rate_limit.developer"));
  problems.throwIfAny();
  if (app) policy.app = app;
  if (developer) policy.developer = developer;
  return { plugin: block?.plugin ?? DEFAULT_RATE_LIMIT_PLUGIN, options: block?.options ?? {}, policy };
}
