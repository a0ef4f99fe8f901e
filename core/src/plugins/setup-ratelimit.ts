/**
 * Loads and sets up the rate-limit plugin (docs/plugins.md, "Rate-limit plugins"), once, before the
 * server starts. The limiter runs whenever the config sets a limit (`rate_limit`, or any
 * `providers.<name>.rate_limit`); without `rate_limit.plugin` it is `ratelimit-memory`.
 */
import { ConfigError } from "../config/config-error.ts";
import type { ModelmuxConfig } from "../config/types.ts";
import { resolveRateLimits } from "../config/resolve-rate-limits.ts";
import type { RateLimiterDefinition } from "../plugin.ts";
import { createRateLimits, type RateLimits } from "../rate-limit/acquire.ts";
import { loadPlugin } from "./load-plugin.ts";
import { validatePluginOptions, type SetupContext } from "./setup-providers.ts";

export async function setupRateLimits(config: ModelmuxConfig, ctx: SetupContext): Promise<RateLimits | undefined> {
  const resolved = resolveRateLimits(config);
  if (!resolved) return undefined;
  const { plugin } = resolved;
  const given = Object.hasOwn(ctx.plugins, plugin) ? ctx.plugins[plugin] : undefined;
  if (given && given.kind !== "ratelimit") throw new ConfigError(`rate_limit.plugin: '${plugin}' is not a rate-limit plugin`);
  const definition = (given as RateLimiterDefinition<never> | undefined) ?? (await loadPlugin(plugin, "ratelimit", "rate_limit.plugin", ctx.baseDir));
  const options = validatePluginOptions(definition, resolved.options, "rate_limit.options");
  const logger = ctx.logger.withTag(`ratelimit:${definition.name}`);
  let limiter;
  try {
    limiter = await definition.setup(options as never, { name: "rate_limit", logger, http: ctx.http });
  } catch (error) {
    throw new ConfigError(`rate_limit: plugin '${definition.name}' failed to start: ${(error as Error).message}`, { cause: error });
  }
  return createRateLimits(limiter, resolved.policy, logger);
}
