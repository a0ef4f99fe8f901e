/**
 * `ready()` (docs/plugins.md, "Readiness"), what `GET /readyz` asks: a PING, which fails with the
 * reason when Redis is down (a closed port) or stalls (a server that never answers), bounded by
 * `command_timeout_ms`. The Redis that is up is at REDIS_URL (skipped with a message when
 * unreachable, failed under CI=true).
 */
import { closedPort } from "../../../test/helpers/closed-port.ts";
import { createLogger } from "@modelmux/core";
import { startSilentServer } from "@modelmux/core/testing";
import { describe, expect, test } from "vitest";
import { REDIS_URL, redisGate } from "../../storage-unstorage/test/redis-gate.ts";
import { createRedisLimiter } from "../src/index.ts";

const { skip } = await redisGate("ratelimit-redis ready");
const quiet = () => createLogger({ level: "silent" });
const prefix = `modelmux-test:${process.pid}-rl-ready:`;


describe("ratelimit-redis ready()", () => {
  test("a Redis that is down fails the check, naming the server and the connection's reason", async () => {
    const port = await closedPort();
    const limiter = await createRedisLimiter({ url: `redis://127.0.0.1:${port}`, prefix, connect_timeout_ms: 300 }, quiet());
    await expect(limiter.ready!()).rejects.toThrow(`Redis at 127.0.0.1:${port} did not answer PING: connect ECONNREFUSED 127.0.0.1:${port}`);
    await limiter.close?.();
  });

  test("a Redis that never answers fails the check once command_timeout_ms is up", async () => {
    const silent = await startSilentServer();
    const limiter = await createRedisLimiter({ url: `redis://127.0.0.1:${silent.port}`, prefix, connect_timeout_ms: 300, command_timeout_ms: 100 }, quiet());
    await expect(limiter.ready!()).rejects.toThrow(`Redis at 127.0.0.1:${silent.port} did not answer PING: Command timed out`);
    await limiter.close?.();
    await silent.close();
  });

  test.skipIf(skip !== undefined)("a Redis that answers is ready", async () => {
    const limiter = await createRedisLimiter({ url: REDIS_URL, prefix }, quiet());
    await expect(limiter.ready!()).resolves.toBeUndefined();
    await limiter.close?.();
  });
});
