/**
 * Everything `createRouter` checks before it sets anything up, run as independent steps so that one
 * start (or `modelmux check`) reports every problem of a config, not only the first: each section's
 * resolver, then every plugin the config names, loaded and its options validated
 * (`plugins/load-plugins.ts`). What a step needs from a step that failed is left out, never guessed.
 */
import type { Pricing } from "../operations/pricing.ts";
import { loadPlugins, providersOn, type LoadContext, type LoadedPlugins } from "../plugins/load-plugins.ts";
import { checkResponsesProvider } from "../responses/target.ts";
import type { JwtSettings } from "../server/auth/jwt.ts";
import type { OriginPolicy } from "../server/public-origin.ts";
import { ConfigProblems } from "./config-error.ts";
import { resolveAliases, resolveApiKeys, resolveServer, type ResolvedKeys, type ServerSettings } from "./resolve-config.ts";
import { resolveJwt } from "./resolve-jwt.ts";
import { resolveOriginPolicy } from "./resolve-origin-policy.ts";
import { resolvePricing } from "./resolve-pricing.ts";
import { resolveRouting, type ResolvedRouting } from "./resolve-routing.ts";
import type { ModelmuxConfig } from "./types.ts";

export interface CheckedConfig {
  settings: ServerSettings;
  keys: ResolvedKeys;
  jwt: JwtSettings | undefined;
  originPolicy: OriginPolicy;
  /** The providers that are on (`requires_env` met). */
  served: ReadonlySet<string>;
  aliases: ReturnType<typeof resolveAliases>;
  routing: ResolvedRouting;
  pricing: Pricing;
  plugins: LoadedPlugins;
}

/**
 * Resolves every section of a config that passed the schema, and loads its plugins.
 * @throws ConfigError listing every problem found, each with its path
 */
export async function checkConfig(config: ModelmuxConfig, ctx: LoadContext): Promise<CheckedConfig> {
  const problems = new ConfigProblems();
  const settings = problems.check(() => resolveServer(config));
  const keys = problems.check(() => resolveApiKeys(config));
  const jwt = problems.check(() => resolveJwt(config));
  const originPolicy = problems.check(() => resolveOriginPolicy(config));
  const served = problems.check(() => providersOn(config, ctx.env, ctx.logger)) ?? new Set<string>();
  const aliases = problems.check(() => resolveAliases(config, served));
  const routing = problems.check(() => resolveRouting(config, served));
  const pricing = problems.check(() => resolvePricing(config));
  problems.check(() => checkResponsesProvider(config));
  const plugins = await loadPlugins(config, served, ctx, problems);
  problems.throwIfAny();
  return { settings: settings!, keys: keys!, jwt, originPolicy: originPolicy!, served, aliases: aliases!, routing: routing!, pricing: pricing!, plugins };
}
