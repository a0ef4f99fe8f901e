/**
 * The first half of starting the plugins, in which nothing is set up yet (nothing connects, nothing
 * starts): every plugin the config names is imported and its options are validated with its own
 * schema. Each plugin is checked whatever became of the others, so that `modelmux check` reports
 * every problem at once; `setup-providers.ts`, `setup-storage.ts` and `setup-ratelimit.ts` set up
 * what loaded.
 */
import type { ConsolaInstance } from "consola";
import { ConfigError, type ConfigProblems } from "../config/config-error.ts";
import { resolveRateLimits } from "../config/resolve-rate-limits.ts";
import { PROVIDER_CORE_KEYS, type ModelmuxConfig, type ProviderConfig } from "../config/types.ts";
import { parseDuration, parseTimer } from "../config/units.ts";
import type { PluginDefinition, ProviderDefinition, RateLimiterDefinition, StorageDefinition } from "../plugin.ts";
import type { RateLimitPolicy } from "../rate-limit/policy.ts";
import { createAjv, formatAjvError } from "../validation/ajv.ts";
import { distinctProblems } from "../validation/error-list.ts";
import { loadPlugin, type PluginKind } from "./load-plugin.ts";
import { storageContractProblem } from "./storage-contract-check.ts";
import { DEFAULT_STORAGE_TIMEOUT_MS } from "./storage-timeout.ts";

export interface LoadContext {
  /** Where `./` plugin paths are resolved from. */
  baseDir: string;
  env: NodeJS.ProcessEnv;
  logger: ConsolaInstance;
  /** Definitions given directly (by `plugin` reference) instead of being imported. */
  plugins: Readonly<Record<string, PluginDefinition>>;
}

export interface LoadedProvider {
  /** The provider's name in the config (`openai`), which prefixes its models. */
  name: string;
  block: ProviderConfig;
  definition: ProviderDefinition<never>;
  /** The block's own keys, validated and with the schema's defaults. */
  options: Record<string, unknown>;
  /** `timeout` in ms; 0 is no limit. */
  timeoutMs: number;
}

export interface LoadedPlugins {
  providers: LoadedProvider[];
  storage?: { definition: StorageDefinition<never>; options: Record<string, unknown>; timeoutMs: number; ttlMs?: number };
  rateLimit?: { definition: RateLimiterDefinition<never>; options: Record<string, unknown>; policy: RateLimitPolicy };
}

const DEFAULT_PROVIDER_TIMEOUT_MS = 600_000;

// Plugin options come from the same YAML and `${VAR}` text as the config: coerce them the same way,
// and report every problem with "did you mean" (`allErrors`, `verbose`), as for the config.
const optionsAjv = createAjv({ useDefaults: true, coerceTypes: true, allErrors: true, verbose: true });

/**
 * Validates a plugin's options with its own schema; every problem is reported, prefixed with the config path.
 * @param siblings Keys beside the options that are the core's (a provider block's `models`…), offered
 *   by "did you mean" for an unknown key at the top.
 */
export function validatePluginOptions(
  definition: PluginDefinition,
  options: Record<string, unknown>,
  path: string,
  siblings: readonly string[] = [],
): Record<string, unknown> {
  let validate;
  try {
    validate = optionsAjv.compile(definition.optionsSchema);
  } catch (error) {
    throw new ConfigError(`${path}: plugin '${definition.name}' has an invalid optionsSchema (${(error as Error).message})`);
  }
  const copy = structuredClone(options);
  if (!validate(copy)) {
    throw new ConfigError(distinctProblems(validate.errors ?? [], (error) => formatAjvError(error, path, copy, error.instancePath === "" ? siblings : [])));
  }
  return copy;
}

/** The names of the providers that are on: each variable of a block's `requires_env` is set and not empty. */
export function providersOn(config: ModelmuxConfig, env: NodeJS.ProcessEnv, logger: ConsolaInstance): Set<string> {
  const on = new Set<string>();
  for (const [name, block] of Object.entries(config.providers)) {
    const missing = block.requires_env?.find((variable) => !env[variable]);
    if (missing) logger.info(`provider '${name}' is off: ${missing} is not set`);
    else on.add(name);
  }
  if (on.size === 0) {
    throw new ConfigError(`providers: no provider is on (skipped for missing environment variables: ${Object.keys(config.providers).join(", ")})`);
  }
  return on;
}

const KIND_NAMES = { provider: "provider", storage: "storage", ratelimit: "rate-limit" } as const;

async function definitionOf<K extends PluginKind>(reference: string, kind: K, path: string, ctx: LoadContext) {
  const given = Object.hasOwn(ctx.plugins, reference) ? ctx.plugins[reference] : undefined;
  if (!given) return loadPlugin(reference, kind, path, ctx.baseDir);
  if (given.kind !== kind) throw new ConfigError(`${path}: '${reference}' is not a ${KIND_NAMES[kind]} plugin`);
  return given as Extract<PluginDefinition, { kind: K }>;
}

function providerOptions(block: ProviderConfig): Record<string, unknown> {
  const options: Record<string, unknown> = { ...block };
  for (const key of PROVIDER_CORE_KEYS) delete options[key];
  return options;
}

/**
 * Imports every plugin the config names and validates its options: the providers that are on
 * (`on`), the storage, the rate limiter. A plugin that cannot be used is left out, its problems
 * added to `problems`.
 */
export async function loadPlugins(config: ModelmuxConfig, on: ReadonlySet<string>, ctx: LoadContext, problems: ConfigProblems): Promise<LoadedPlugins> {
  const providers: LoadedProvider[] = [];
  for (const [name, block] of Object.entries(config.providers)) {
    if (!on.has(name)) continue;
    const path = `providers.${name}`;
    const definition = await problems.checkAsync(() => definitionOf(block.plugin, "provider", `${path}.plugin`, ctx));
    if (!definition) continue;
    const options = problems.check(() => validatePluginOptions(definition, providerOptions(block), path, PROVIDER_CORE_KEYS));
    const timeoutMs = problems.check(() => (block.timeout === undefined ? DEFAULT_PROVIDER_TIMEOUT_MS : parseTimer(block.timeout, `${path}.timeout`)));
    if (options && timeoutMs !== undefined) providers.push({ name, block, definition, options, timeoutMs });
  }
  const loaded: LoadedPlugins = { providers };

  const storage = config.storage;
  if (storage) {
    const definition = await problems.checkAsync(() => definitionOf(storage.plugin, "storage", "storage.plugin", ctx));
    // Before its options: an old plugin's options may well be valid, and this is what is wrong.
    const contractProblem = definition && storageContractProblem(definition);
    if (contractProblem !== undefined) problems.add(contractProblem);
    else if (definition) {
      const options = problems.check(() => validatePluginOptions(definition, storage.options ?? {}, "storage.options"));
      const timeoutMs = problems.check(() => (storage.timeout === undefined ? DEFAULT_STORAGE_TIMEOUT_MS : parseTimer(storage.timeout, "storage.timeout")));
      const ttlMs = storage.ttl === undefined ? undefined : parseDuration(storage.ttl);
      if (options && timeoutMs !== undefined) loaded.storage = { definition, options, timeoutMs, ...(ttlMs === undefined ? {} : { ttlMs }) };
    }
  }

  const limits = problems.check(() => resolveRateLimits(config));
  if (limits) {
    const definition = await problems.checkAsync(() => definitionOf(limits.plugin, "ratelimit", "rate_limit.plugin", ctx));
    const options = definition && problems.check(() => validatePluginOptions(definition, limits.options, "rate_limit.options"));
    if (definition && options) loaded.rateLimit = { definition, options, policy: limits.policy };
  }
  return loaded;
}
