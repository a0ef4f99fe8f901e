/**
 * Sets up the rate-limit plugin (docs/plugins.md, "Rate-limit plugins"), once, before the server
 * starts, from what `load-plugins.ts` loaded. The limiter runs whenever the config sets a limit
 * (`rate_limit`, or any `providers.<name>.rate_limit`); without `rate_limit.plugin` it is
 * `ratelimit-memory`.
 */
import { ConfigError } from "../config/config-error.ts";
import { createRateLimits, type RateLimits } from "../rate-limit/acquire.ts";
import type { LoadedPlugins } from "./load-plugins.ts";
import type { SetupContext } from "./setup-providers.ts";

export async function setupRateLimits(loaded: LoadedPlugins["rateLimit"], ctx: SetupContext): Promise<RateLimits | undefined> {
  if (!loaded) return undefined;
  const { definition, options, policy } = loaded;
  const logger = ctx.logger.withTag(`ratelimit:${definition.name}`);
  let limiter;
  try {
    limiter = await definition.setup(options as never, { name: "rate_limit", logger, http: ctx.http });
  } catch (error) {
    throw new ConfigError(`rate_limit: plugin '${definition.name}' failed to start: ${(error as Error).message}`, { cause: error });
  }
  return createRateLimits(limiter, policy, logger);
}
