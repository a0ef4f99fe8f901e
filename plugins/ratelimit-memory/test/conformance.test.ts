import { testRateLimiter } from "@modelmux/core/testing";
import { createMemoryLimiter } from "../src/index.ts";

testRateLimiter({ name: "ratelimit-memory", create: async () => createMemoryLimiter() });
