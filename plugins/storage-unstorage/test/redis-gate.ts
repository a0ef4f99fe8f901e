/**
 * Whether the Redis suites run. Redis is at `REDIS_URL` (default `redis://127.0.0.1:6379`). When it
 * cannot be reached the suites are skipped with a message, except under `CI=true`, where a missing
 * Redis is a failure: CI must never go green without having run them (DEVELOPERS.md).
 */
import { Redis } from "ioredis";
import { describe, it } from "vitest";

export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** Undefined when Redis answers PING at `url`; otherwise why not. */
export async function probeRedis(url = REDIS_URL): Promise<string | undefined> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1_000 });
  // The socket's own error (ECONNREFUSED…) says more than connect()'s "Connection is closed".
  let socketError: string | undefined;
  client.on("error", (error: Error) => (socketError ??= error.message));
  try {
    await client.connect();
    await client.ping();
    return undefined;
  } catch (error) {
    return socketError ?? (error instanceof Error ? error.message : String(error));
  } finally {
    client.disconnect();
  }
}

/**
 * Probes Redis once. Returns the `skip` message for `testStorage` (undefined: run), and under
 * `CI=true` registers a failing test instead of skipping.
 */
export async function redisGate(suite: string): Promise<{ skip: string | undefined }> {
  const problem = await probeRedis();
  if (problem === undefined) return { skip: undefined };
  const message = `Redis is not reachable at ${REDIS_URL} (${problem}); start it as DEVELOPERS.md says, or set REDIS_URL`;
  if (process.env.CI === "true") {
    describe(suite, () => {
      it("needs Redis: under CI=true the Redis suites fail rather than skip", () => {
        throw new Error(message);
      });
    });
  } else {
    console.warn(`[${suite}] skipped: ${message}`);
  }
  return { skip: message };
}

/** Deletes every key under `prefix` (SCAN + UNLINK, never KEYS). */
export async function deletePrefix(prefix: string, url = REDIS_URL): Promise<number> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  let deleted = 0;
  try {
    let cursor = "0";
    do {
      const [next, keys] = await client.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 500);
      cursor = next;
      if (keys.length > 0) deleted += await client.unlink(...keys);
    } while (cursor !== "0");
  } finally {
    client.disconnect();
  }
  return deleted;
}
