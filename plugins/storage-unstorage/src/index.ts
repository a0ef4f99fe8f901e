/**
 * @modelmux/storage-unstorage: stored chat completions, images and usage counters (docs/plugins.md,
 * "Storage plugins") on unstorage's memory, fs or redis driver. Records are kept whole under their
 * id; lists walk ordered indexes (all, per model, per metadata pair), so a page costs the page, not
 * the store. The key design is in README.md.
 *
 * @example
 * storage:
 *   plugin: storage-unstorage
 *   options: { driver: fs, base: ./.modelmux/data }
 *   ttl: 30d
 */
import { defineStorage, type JsonSchema, type Storage } from "@modelmux/core";
import memoryDriver from "unstorage/drivers/memory";
import { atomicFsDriver } from "./atomic-fs.ts";
import { folderReady } from "./folder-ready.ts";
import { createKvStorage } from "./kv-storage.ts";
import { createRedisStorage, DEFAULT_COMMAND_TIMEOUT_MS } from "./redis-storage.ts";

/** The keys of `storage.options` with `plugin: storage-unstorage`. */
export interface UnstorageOptions {
  /** Which unstorage driver keeps the data. */
  driver: "memory" | "fs" | "redis";
  /** fs: the directory, resolved against the working directory. Default `./.modelmux/data`. */
  base?: string;
  /** redis: the connection URL. Default `redis://127.0.0.1:6379`. */
  url?: string;
  /** Prefix of every key (a sub-directory on fs), so several routers can share one Redis. Default `modelmux`. */
  prefix?: string;
  /** redis: ms a command may wait for Redis (while reconnecting too) before its request gets `storage_error`. Default 1000. */
  command_timeout_ms?: number;
}

/** The JSON Schema the core validates `UnstorageOptions` with when the plugin loads. */
export const optionsSchema: JsonSchema = {
  type: "object",
  additionalProperties: false,
  required: ["driver"],
  properties: {
    driver: { enum: ["memory", "fs", "redis"], description: "Which unstorage driver keeps the data." },
    base: { type: "string", minLength: 1, default: "./.modelmux/data", description: "fs: the data directory." },
    url: { type: "string", pattern: "^rediss?://", default: "redis://127.0.0.1:6379", description: "redis: the connection URL." },
    prefix: { type: "string", minLength: 1, pattern: "^[^*?\\[\\]\\s]+$", default: "modelmux", description: "Prefix of every key." },
    command_timeout_ms: {
      type: "integer",
      minimum: 1,
      default: DEFAULT_COMMAND_TIMEOUT_MS,
      description: "redis: ms a command may wait for Redis (queued while reconnecting too) before the request fails with storage_error.",
    },
  },
};

export default defineStorage<UnstorageOptions>({
  contract: 2,
  name: "unstorage",
  optionsSchema,
  setup(options, ctx): Storage {
    const { driver, base = "./.modelmux/data", url = "redis://127.0.0.1:6379", prefix = "modelmux", command_timeout_ms: commandTimeoutMs } = options;
    const common = { prefix, ttlMs: ctx.ttlMs, logger: ctx.logger };
    switch (driver) {
      case "memory":
        return createKvStorage({ driver: memoryDriver(), ...common });
      case "fs":
        return { ...createKvStorage({ driver: atomicFsDriver(base), ...common }), ready: () => folderReady(base) };
      case "redis":
        return createRedisStorage({ url, commandTimeoutMs, ...common });
    }
  },
});

export { createKvStorage, type KvStorageOptions } from "./kv-storage.ts";
export { createRedisStorage, type RedisStorageOptions } from "./redis-storage.ts";
export { atomicFsDriver } from "./atomic-fs.ts";
