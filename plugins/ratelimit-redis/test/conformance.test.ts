import { createLogger } from "@modelmux/core";
import { testRateLimiter } from "@modelmux/core/testing";
import { afterAll } from "vitest";
import { deletePrefix, REDIS_URL, redisGate } from "../../storage-unstorage/test/redis-gate.ts";
import { createRedisLimiter } from "../src/index.ts";

const { skip } = await redisGate("ratelimit-redis (conformance)");
const prefix = `modelmux-test:${process.pid}-rl-kit`;
afterAll(async () => {
  if (skip === undefined) await deletePrefix(prefix);
});

testRateLimiter({
  name: "ratelimit-redis",
  skip,
  create: () => createRedisLimiter({ url: REDIS_URL, prefix: `${prefix}:` }, createLogger({ level: "silent" })),
});
