/**
 * Loads and sets up the storage plugin of `storage` (README, "Stored completions" and "Plugins"),
 * once, before the server starts. No `storage` block: stored completions are off. A plugin must
 * state the storage contract this core speaks (`storage-contract-check.ts`). Every call the core
 * makes to it is bounded by `storage.timeout` (`storage-timeout.ts`).
 */
import { ConfigError } from "../config/config-error.ts";
import type { ModelmuxConfig } from "../config/types.ts";
import { parseDuration, parseTimer } from "../config/units.ts";
import type { Storage, StorageDefinition } from "../plugin.ts";
import { loadPlugin } from "./load-plugin.ts";
import { storageContractProblem } from "./storage-contract-check.ts";
import { validatePluginOptions, type SetupContext } from "./setup-providers.ts";
import { boundStorage, DEFAULT_STORAGE_TIMEOUT_MS } from "./storage-timeout.ts";

export async function setupStorage(config: ModelmuxConfig, ctx: SetupContext): Promise<Storage | undefined> {
  const block = config.storage;
  if (!block) return undefined;
  const given = Object.hasOwn(ctx.plugins, block.plugin) ? ctx.plugins[block.plugin] : undefined;
  if (given && given.kind !== "storage") throw new ConfigError(`storage.plugin: '${block.plugin}' is not a storage plugin`);
  const definition = (given as StorageDefinition<never> | undefined) ?? (await loadPlugin(block.plugin, "storage", "storage.plugin", ctx.baseDir));
  // Before its options: an old plugin's options may well be valid, and this is what is wrong.
  const problem = storageContractProblem(definition);
  if (problem !== undefined) throw new ConfigError(problem);
  const options = validatePluginOptions(definition, block.options ?? {}, "storage.options");
  const timeoutMs = block.timeout === undefined ? DEFAULT_STORAGE_TIMEOUT_MS : parseTimer(block.timeout, "storage.timeout");
  let storage: Storage;
  try {
    storage = await definition.setup(options as never, {
      name: "storage",
      logger: ctx.logger.withTag(`storage:${definition.name}`),
      http: ctx.http,
      ttlMs: block.ttl === undefined ? undefined : parseDuration(block.ttl),
    });
  } catch (error) {
    throw new ConfigError(`storage: plugin '${definition.name}' failed to start: ${(error as Error).message}`, { cause: error });
  }
  // 0 turns the bound off.
  return timeoutMs === 0 ? storage : boundStorage(storage, timeoutMs);
}
