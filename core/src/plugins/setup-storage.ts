/**
 * Sets up the storage plugin of `storage` (README, "Stored completions" and "Plugins"), once, before
 * the server starts, from what `load-plugins.ts` loaded (the plugin states the storage contract this
 * core speaks, its options are valid). No `storage` block: stored completions are off. Every call
 * the core makes to it is bounded by `storage.timeout` (`storage-timeout.ts`).
 */
import { ConfigError } from "../config/config-error.ts";
import type { Storage } from "../plugin.ts";
import type { LoadedPlugins } from "./load-plugins.ts";
import type { SetupContext } from "./setup-providers.ts";
import { boundStorage } from "./storage-timeout.ts";

export async function setupStorage(loaded: LoadedPlugins["storage"], ctx: SetupContext): Promise<Storage | undefined> {
  if (!loaded) return undefined;
  const { definition, options, timeoutMs, ttlMs } = loaded;
  let storage: Storage;
  try {
    storage = await definition.setup(options as never, {
      name: "storage",
      logger: ctx.logger.withTag(`storage:${definition.name}`),
      http: ctx.http,
      ttlMs,
    });
  } catch (error) {
    throw new ConfigError(`storage: plugin '${definition.name}' failed to start: ${(error as Error).message}`, { cause: error });
  }
  // 0 turns the bound off.
  return timeoutMs === 0 ? storage : boundStorage(storage, timeoutMs);
}
