/**
 * Stored completions on Redis, shared by any number of router instances. The connection is
 * unstorage's redis driver (ioredis, created on first use); the commands go to its client
 * (`getInstance()`), because the layout needs what unstorage's key-value API lacks: TTLs in ms,
 * sorted sets, and MULTI. This driver-specific index is what the issue allows for.
 *
 * Every key of one owner (the app that stored the completion) starts with its base: `<prefix>:`
 * for the owner `default` (the layout from before owners, so its data stays readable), and
 * `<prefix>:o:<owner>:` for any other, with `%` and `:` in the owner written `%25`, `%3A`.
 * - `<base>c:<id>`: the record, JSON text, with a native `PX` expiry under `storage.ttl`.
 * - `<base>i:all`, `<base>i:m:<model>`, `<base>i:md:<key>=<value>`: sorted sets whose members are
 *   index entries (`<order key> <id>`), all with score 0, so ZRANGEBYLEX walks them in list order
 *   from any cursor in O(log n + page).
 * - `<prefix>:img:<key>`: a generated image (`images.ts`); `<prefix>:usage:<day>`: a day's usage
 *   counters (`usage-redis.ts`).
 * Every write is one MULTI: a reader sees a save, an update or a delete whole or not at all, and
 * two instances never lose each other's index entries. Every command has a timeout
 * (`command_timeout_ms`): a stalled Redis fails a request in about that long, never holds it; a
 * connection is replaced only when it has answered nothing in time for `CONNECTION_PATIENCE` times
 * that long (README, "Redis timeouts").
 */
import type { CompletionOwner, CompletionPage, PluginContext, Storage } from "@modelmux/core";
import type { Redis } from "ioredis";
import redisDriver from "unstorage/drivers/redis";
import { guarded, storageError } from "./errors.ts";
import { execute } from "./redis-exec.ts";
import { redisUsage } from "./usage-redis.ts";
import { redisImages } from "./images.ts";
import { isCommandTimeout, watchLateReplies } from "./late-replies.ts";
import { indexEntry, indexesOf, LEGACY_OWNER, nextOrderKey, ttlCutoff, type IndexNames } from "./keys.ts";
import { collectPage, cursorEntry, type EntrySource } from "./page.ts";
import { decodeRecord, encodeRecord, isCurrent, isExpired, isRecordOf, matchesQuery, type StoredRecord } from "./record.ts";

export interface RedisStorageOptions {
  url: string;
  prefix: string;
  ttlMs: number | undefined;
  logger: Pick<PluginContext["logger"], "warn">;
  /** Ms a command may wait for Redis's answer (queued while reconnecting included). Default 1000. */
  commandTimeoutMs?: number;
}

/** `command_timeout_ms` when the options set none: the Redis rate limiter's default too. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 1_000;

/**
 * How many command timeouts a connection may go without a timely answer before it is dropped and
 * made again. Redis answers in order, so behind one slow command (a large MGET, a fork for a
 * snapshot, another client's slow script) every command on the connection waits, and they all get
 * their answers once it is done: with the connection kept, only the commands that waited past
 * their own timeout fail. With three (3 s by default), a Redis pause shorter than that costs only
 * those commands, while a dead connection is still replaced in seconds, not in the many minutes TCP
 * takes to give up on it.
 */
export const CONNECTION_PATIENCE = 3;

/** A `Storage` on Redis. Nothing connects until the first call. */
export function createRedisStorage({ url, prefix, ttlMs, logger, commandTimeoutMs = DEFAULT_COMMAND_TIMEOUT_MS }: RedisStorageOptions): Storage {
  const driver = redisDriver({
    url,
    // Few retries per command: a request waiting on a dead Redis fails in about a second, not minutes.
    maxRetriesPerRequest: 2,
    connectTimeout: 5_000,
    // Every command, also one queued while the connection is down, fails after this long.
    commandTimeout: commandTimeoutMs,
    // A connection that got no byte back for this long while commands wait is dropped and made
    // again: a half-open connection (a peer or path gone silent) would otherwise fail every
    // command, one timeout at a time, until TCP itself gives up many minutes later. Dropping it
    // fails every command in flight on it, so not after one slow command: see CONNECTION_PATIENCE.
    socketTimeout: commandTimeoutMs * CONNECTION_PATIENCE,
    // A command its caller was already told had failed (timed out) must not run later, on a new
    // connection, behind the caller's back.
    autoResendUnfulfilledCommands: false,
  });
  let client: Redis | undefined;
  let reportedDown = false;
  /** The connection's last error, for a readiness check that fails while it is down. */
  let connectionError: string | undefined;
  // Logs name the server, never the URL's password. (The core's logger is tagged already.)
  const server = URL.canParse(url) ? new URL(url).host : "redis";
  const redis = (): Redis => {
    if (client) return client;
    client = driver.getInstance!() as Redis;
    // ioredis reconnects by itself; one warning per outage, not one per attempt.
    client.on("error", (error: Error) => {
      if (!reportedDown) logger.warn(`Redis at ${server}: ${error.message}`);
      reportedDown = true;
      connectionError = error.message;
    });
    client.on("ready", () => {
      reportedDown = false;
      connectionError = undefined;
    });
    return client;
  };
  // Bytes that keep coming, all of them late: the case `socketTimeout` cannot see.
  const lateReplies = watchLateReplies({
    windowMs: commandTimeoutMs * CONNECTION_PATIENCE,
    commandTimeoutMs,
    replace() {
      if (client?.status !== "ready") return;
      logger.warn(`Redis at ${server}: no command answered in time for ${commandTimeoutMs * CONNECTION_PATIENCE} ms; reconnecting`);
      client.disconnect(true);
    },
  });
  /** `guarded`, telling the watch whether the call got its answers in time. */
  const watched = <T>(operation: string, run: () => Promise<T>): Promise<T> =>
    guarded(operation, () =>
      run().then(
        (value) => (lateReplies.succeeded(), value),
        (error: unknown) => {
          if (isCommandTimeout(error)) lateReplies.timedOut();
          throw error;
        },
      ),
    );

  // Redis keys take any bytes; only "=" (and "%", the escape) are escaped in a pair, so the pair
  // ("a=b", "c") never shares a key with ("a", "b=c"); ":" (and "%") in an owner, so the owner's
  // part of a key ends at its first ":".
  const escapePair = (text: string) => text.replace(/[%=]/g, (char) => (char === "%" ? "%25" : "%3D"));
  const escapeOwner = (text: string) => text.replace(/[%:]/g, (char) => (char === "%" ? "%25" : "%3A"));
  const baseOf = (owner: CompletionOwner) => (owner === LEGACY_OWNER ? `${prefix}:` : `${prefix}:o:${escapeOwner(owner)}:`);
  const namesOf = (owner: CompletionOwner): IndexNames => {
    const base = baseOf(owner);
    return {
      all: `${base}i:all`,
      model: (model) => `${base}i:m:${model}`,
      pair: (key, value) => `${base}i:md:${escapePair(key)}=${escapePair(value)}`,
    };
  };
  const recordKey = (owner: CompletionOwner, id: string) => `${baseOf(owner)}c:${id}`;
  const background = new Set<Promise<unknown>>();
  const images = redisImages(redis, prefix);
  const usage = redisUsage(redis, prefix);

  async function readRecord(owner: CompletionOwner, id: string): Promise<StoredRecord | undefined> {
    const record = decodeRecord(await redis().get(recordKey(owner, id)));
    // Keys are UTF-8: two ids with different lone surrogates share one key; the record says whose.
    if (!isRecordOf(record, owner, id)) return undefined;
    // Redis expires records itself; the check covers a TTL lowered after they were written.
    return isExpired(record, ttlMs) ? undefined : record;
  }

  /** Entries from `name` in list order after `after`, none below the TTL cutoff. */
  function walk(name: string, order: "asc" | "desc", after: string | undefined): EntrySource {
    const cutoff = ttlCutoff(ttlMs);
    if (order === "asc") {
      let from = after === undefined ? "-" : `(${after}`;
      if (cutoff !== undefined && (after === undefined || after < cutoff)) from = `[${cutoff}`;
      return async (count) => {
        const entries = await redis().zrangebylex(name, from, "+", "LIMIT", 0, count);
        if (entries.length > 0) from = `(${entries.at(-1)}`;
        return entries;
      };
    }
    let to = after === undefined ? "+" : `(${after}`;
    const floor = cutoff === undefined ? "-" : `[${cutoff}`;
    return async (count) => {
      const entries = await redis().zrevrangebylex(name, to, floor, "LIMIT", 0, count);
      if (entries.length > 0) to = `(${entries.at(-1)}`;
      return entries;
    };
  }

  return {
    saveCompletion: (entry) =>
      watched("saveCompletion", async () => {
        const { owner } = entry;
        const id = entry.completion.id;
        const key = recordKey(owner, id);
        const orderKey = nextOrderKey(entry.createdAt);
        const member = indexEntry(orderKey, id);
        const cutoff = ttlCutoff(ttlMs);
        const multi = redis().multi();
        const text = encodeRecord({ v: 1, orderKey, entry });
        const remaining = ttlMs === undefined ? undefined : entry.createdAt + ttlMs - Date.now();
        if (remaining === undefined) multi.set(key, text);
        else if (remaining > 0) multi.set(key, text, "PX", Math.ceil(remaining));
        else multi.del(key); // already past its TTL: stored and expired at once
        for (const name of indexesOf(namesOf(owner), entry)) {
          multi.zadd(name, 0, member);
          // Trimming what expired keeps each index as long as the TTL window, never longer.
          if (cutoff !== undefined) multi.zremrangebylex(name, "-", `(${cutoff}`);
        }
        // A re-saved id leaves its old entries behind; they no longer match the record's order
        // key, so lists skip them and remove them when met.
        await execute(multi);
      }),

    getCompletion: (owner, id) => watched("getCompletion", async () => (await readRecord(owner, id))?.entry),

    listCompletions: (query) =>
      watched("listCompletions", async (): Promise<CompletionPage | undefined> => {
        const { owner } = query;
        const after = await cursorEntry(query.after, (id) => readRecord(owner, id));
        if (after === null) return undefined;
        const names = namesOf(owner);
        const candidates = [
          ...(query.model === undefined ? [] : [names.model(query.model)]),
          ...Object.entries(query.metadata ?? {}).map(([key, value]) => names.pair(key, value)),
        ];
        let name = names.all;
        if (candidates.length > 0) {
          // Walk the smallest matching set; the records confirm the other filters.
          const sizes = await Promise.all(candidates.map((candidate) => redis().zcard(candidate)));
          if (sizes.some((size) => size === 0)) return { data: [], hasMore: false };
          const smallest = sizes.indexOf(Math.min(...sizes));
          name = candidates[smallest]!;
        }
        return collectPage(
          {
            source: walk(name, query.order, after),
            fetch: async (ids) => (await redis().mget(ids.map((id) => recordKey(owner, id)))).map(decodeRecord),
            check: (record, entry) => {
              if (!isCurrent(record, entry) || isExpired(record, ttlMs)) return "stale";
              return matchesQuery(record, query) ? "match" : "skip";
            },
            // Entries of expired, deleted or re-saved records: gone for good, safe to remove.
            onStale: (entries) => {
              const removal = redis().zrem(name, ...entries).catch((error: unknown) => logger.warn("index cleanup failed:", error));
              background.add(removal);
              void removal.finally(() => background.delete(removal));
            },
          },
          query.limit,
        );
      }),

    updateMetadata: (owner, id, metadata) =>
      watched("updateMetadata", async () => {
        const record = await readRecord(owner, id);
        if (!record) return undefined;
        const updated: StoredRecord = { ...record, entry: { ...record.entry, metadata: { ...metadata } } };
        const member = indexEntry(record.orderKey, id);
        const old = record.entry.metadata;
        const names = namesOf(owner);
        const multi = redis().multi();
        // XX: a completion deleted meanwhile stays deleted; KEEPTTL: it still expires on time.
        multi.set(recordKey(owner, id), encodeRecord(updated), "KEEPTTL", "XX");
        for (const [key, value] of Object.entries(old)) {
          if (!Object.hasOwn(metadata, key) || metadata[key] !== value) multi.zrem(names.pair(key, value), member);
        }
        for (const [key, value] of Object.entries(metadata)) {
          if (!Object.hasOwn(old, key) || old[key] !== value) multi.zadd(names.pair(key, value), 0, member);
        }
        const [written] = await execute(multi);
        return written === null ? undefined : updated.entry;
      }),

    deleteCompletion: (owner, id) =>
      watched("deleteCompletion", async () => {
        const record = await readRecord(owner, id);
        if (!record) return false;
        const member = indexEntry(record.orderKey, id);
        const multi = redis().multi().del(recordKey(owner, id));
        for (const name of indexesOf(namesOf(owner), record.entry)) multi.zrem(name, member);
        const [deleted] = await execute(multi);
        // Two routers deleting at once: only the one whose DEL removed the key says true.
        return deleted === 1;
      }),

    saveImage: (key, image) => watched("saveImage", () => images.saveImage(key, image)),
    getImage: (key) => watched("getImage", () => images.getImage(key)),
    addUsage: (deltas) => watched("addUsage", () => usage.addUsage(deltas)),
    readUsage: (range) => watched("readUsage", () => usage.readUsage(range)),

    // One PING, bounded by command_timeout_ms like every command (docs/plugins.md, "Readiness").
    async ready() {
      try {
        await redis().ping();
      } catch (error) {
        // While the connection is down, its own error (ECONNREFUSED…) says more than the command's.
        const why = client?.status !== "ready" && connectionError ? connectionError : error instanceof Error ? error.message : String(error);
        throw storageError(`Redis at ${server} did not answer PING: ${why}`);
      }
    },

    async close() {
      while (background.size > 0) await Promise.all([...background]);
      // Only a client that exists is closed: the driver's dispose would otherwise create one.
      if (client) await driver.dispose?.();
      client = undefined;
    },
  };
}
