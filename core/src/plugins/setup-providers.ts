/**
 * Sets up every provider that loaded (`load-plugins.ts`: plugin resolved, options validated), once,
 * before the server starts: calls `setup`, and checks that the provider it returns has what the core
 * calls (`provider-contract-check.ts`).
 */
import type { ConsolaInstance } from "consola";
import { ConfigError, ConfigProblems } from "../config/config-error.ts";
import type { HttpClient } from "../upstream/client.ts";
import type { ProviderModels } from "../models/model-table.ts";
import type { Provider } from "../plugin.ts";
import type { LoadedProvider } from "./load-plugins.ts";
import { providerContractProblem, retiredStreamNote } from "./provider-contract-check.ts";

export interface SetupContext {
  logger: ConsolaInstance;
  http: HttpClient;
}

async function setupOne({ name, block, definition, options, timeoutMs }: LoadedProvider, ctx: SetupContext): Promise<ProviderModels> {
  const path = `providers.${name}`;
  let instance;
  try {
    instance = await definition.setup(options as never, { name, logger: ctx.logger.withTag(`provider:${name}`), http: ctx.http });
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
  return {
    provider: name,
    instance,
    timeoutMs,
    capabilities: block.capabilities,
    models: block.models.map((m) => (typeof m === "string" ? { id: m } : m)),
  };
}

/**
 * Sets up the providers, each whatever became of the others. When any fails, those set up are
 * closed and one error names every failure.
 */
export async function setupProviders(loaded: readonly LoadedProvider[], ctx: SetupContext): Promise<ProviderModels[]> {
  const problems = new ConfigProblems();
  const providers: ProviderModels[] = [];
  for (const provider of loaded) {
    const ready = await problems.checkAsync(() => setupOne(provider, ctx));
    if (ready) providers.push(ready);
  }
  if (problems.count > 0) await Promise.allSettled(providers.map((p) => p.instance.close?.()));
  problems.throwIfAny();
  return providers;
}
