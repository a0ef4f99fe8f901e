/**
 * Loads and sets up every provider of the config, once, before the server starts: resolves the
 * plugin, validates the plugin's own keys against its `optionsSchema`, calls `setup`, and checks
 * that the provider it returns has what the core calls (`provider-contract-check.ts`).
 */
import type { ConsolaInstance } from "consola";
import { ConfigError } from "../config/config-error.ts";
import { PROVIDER_CORE_KEYS, type ModelmuxConfig, type ProviderConfig } from "../config/types.ts";
import { parseTimer } from "../config/units.ts";
import type { HttpClient } from "../upstream/client.ts";
import type { ProviderModels } from "../models/model-table.ts";
import type { PluginDefinition, Provider, ProviderDefinition } from "../plugin.ts";
import { createAjv, formatAjvError } from "../validation/ajv.ts";
import { loadPlugin } from "./load-plugin.ts";
import { providerContractProblem, retiredStreamNote } from "./provider-contract-check.ts";

const DEFAULT_TIMEOUT_MS = 600_000;

export interface SetupContext {
  baseDir: string;
  env: NodeJS.ProcessEnv;
  logger: ConsolaInstance;
  http: HttpClient;
  /** Definitions given directly (by `plugin` reference) instead of being imported. */
  plugins: Readonly<Record<string, PluginDefinition>>;
}

// Plugin options come from the same YAML and `${VAR}` text as the config: coerce them the same way.
const optionsAjv = createAjv({ useDefaults: true, coerceTypes: true });

/** Validates a plugin's options with its own schema; errors are prefixed with the config path. */
export function validatePluginOptions(definition: PluginDefinition, options: Record<string, unknown>, path: string): Record<string, unknown> {
  let validate;
  try {
    validate = optionsAjv.compile(definition.optionsSchema);
  } catch (error) {
    throw new ConfigError(`${path}: plugin '${definition.name}' has an invalid optionsSchema (${(error as Error).message})`);
  }
  const copy = structuredClone(options);
  if (!validate(copy)) {
    throw new ConfigError(formatAjvError(validate.errors![0]!, path, copy).message);
  }
  return copy;
}

function pluginOptions(block: ProviderConfig): Record<string, unknown> {
  const options: Record<string, unknown> = { ...block };
  for (const key of PROVIDER_CORE_KEYS) delete options[key];
  return options;
}

async function definitionFor(reference: string, path: string, ctx: SetupContext): Promise<ProviderDefinition<never>> {
  const given = Object.hasOwn(ctx.plugins, reference) ? ctx.plugins[reference] : undefined;
  if (given) {
    if (given.kind !== "provider") throw new ConfigError(`${path}: '${reference}' is not a provider plugin`);
    return given;
  }
  return loadPlugin(reference, "provider", path, ctx.baseDir);
}

/** True when every variable the block requires is set and not empty. */
function missingEnv(block: ProviderConfig, env: NodeJS.ProcessEnv): string | undefined {
  return block.requires_env?.find((name) => !env[name]);
}

/**
 * Sets up the providers; providers whose `requires_env` is not met are skipped with a log line.
 * When one fails, those already set up are closed before the error is thrown.
 */
export async function setupProviders(config: ModelmuxConfig, ctx: SetupContext): Promise<ProviderModels[]> {
  const providers: ProviderModels[] = [];
  try {
    await setupEach(config, ctx, providers);
  } catch (error) {
    await Promise.allSettled(providers.map((p) => p.instance.close?.()));
    throw error;
  }
  return providers;
}

async function setupEach(config: ModelmuxConfig, ctx: SetupContext, providers: ProviderModels[]): Promise<void> {
  const skipped: string[] = [];
  for (const [name, block] of Object.entries(config.providers)) {
    const path = `providers.${name}`;
    const missing = missingEnv(block, ctx.env);
    if (missing) {
      ctx.logger.info(`provider '${name}' is off: ${missing} is not set`);
      skipped.push(name);
      continue;
    }
    const definition = await definitionFor(block.plugin, `${path}.plugin`, ctx);
    const options = validatePluginOptions(definition, pluginOptions(block), path);
    let instance;
    try {
      instance = await definition.setup(options as never, {
        name,
        logger: ctx.logger.withTag(`provider:${name}`),
        http: ctx.http,
      });
    } catch (error) {
      throw new ConfigError(`${path}: plugin '${definition.name}' failed to start: ${(error as Error).message}`, { cause: error });
    }
    const problem = providerContractProblem(instance);
    if (problem !== undefined) {
      await Promise.resolve((instance as Partial<Provider> | null)?.close?.()).catch(() => {});
      throw new ConfigError(`${path}: plugin '${definition.name}' cannot be used: ${problem}`);
    }
    const note = retiredStreamNote(instance);
    if (note !== undefined) ctx.logger.warn(`${path}: plugin '${definition.name}': ${note}`);
    providers.push({
      provider: name,
      instance,
      timeoutMs: block.timeout === undefined ? DEFAULT_TIMEOUT_MS : parseTimer(block.timeout, `${path}.timeout`),
      capabilities: block.capabilities,
      models: block.models.map((m) => (typeof m === "string" ? { id: m } : m)),
    });
  }
  if (providers.length === 0) {
    throw new ConfigError(`providers: no provider is on (skipped for missing environment variables: ${skipped.join(", ")})`);
  }
}
