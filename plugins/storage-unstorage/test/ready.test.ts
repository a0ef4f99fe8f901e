/**
 * `ready()` (docs/plugins.md, "Readiness"), what `GET /readyz` asks: memory has none; fs answers
 * whether its folder takes a file; redis, whether Redis answers a PING, failing with the reason (and
 * not after the core's bound) when it is down. The Redis that is up is at REDIS_URL (skipped with a
 * message when unreachable, failed under CI=true); the one that is down is a closed port.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { closedPort } from "../../../test/helpers/closed-port.ts";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { setupStorage } from "./helpers.ts";
import { REDIS_URL, redisGate } from "./redis-gate.ts";

const { skip } = await redisGate("storage-unstorage ready (redis)");

const dir = mkdtempSync(join(tmpdir(), "modelmux-ready-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));


describe("storage-unstorage ready()", () => {
  test("memory has no backend to ask", async () => {
    const storage = await setupStorage({ driver: "memory" });
    expect(storage.ready).toBeUndefined();
  });

  test("fs: a folder not made yet is made, and takes the probe file, which is gone after", async () => {
    const base = join(dir, "not-yet", "data");
    const storage = await setupStorage({ driver: "fs", base });
    await expect(storage.ready!()).resolves.toBeUndefined();
    expect(existsSync(base)).toBe(true);
    expect(readdirSync(base)).toEqual([]);
    await storage.close?.();
  });

  test("fs: a folder that cannot be made says which and why", async () => {
    const file = join(dir, "a-file");
    writeFileSync(file, "not a folder");
    const storage = await setupStorage({ driver: "fs", base: join(file, "data") });
    await expect(storage.ready!()).rejects.toThrow(`[storage:unstorage] the folder ${join(file, "data")} does not take files: ENOTDIR`);
    await storage.close?.();
  });

  test("redis: a Redis that is down fails the check, naming the server and the connection's reason", async () => {
    const port = await closedPort();
    const storage = await setupStorage({ driver: "redis", url: `redis://127.0.0.1:${port}`, command_timeout_ms: 500 });
    const error = await Promise.resolve(storage.ready!()).then(
      () => undefined,
      (caught: unknown) => caught as Error,
    );
    expect(error?.message).toMatch(new RegExp(`^\\[storage:unstorage\\] Redis at 127\\.0\\.0\\.1:${port} did not answer PING: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}$`));
    await storage.close?.();
  });

  test.skipIf(skip !== undefined)("redis: a Redis that answers is ready", async () => {
    const storage = await setupStorage({ driver: "redis", url: REDIS_URL, prefix: `modelmux-test:${process.pid}-ready` });
    await expect(storage.ready!()).resolves.toBeUndefined();
    await storage.close?.();
  });
});
