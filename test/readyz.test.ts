/**
 * `GET /readyz` (docs/interface.md, "Readiness") over both transports: 200 when every checked
 * plugin's backend answers, 503 `not_ready` naming each one that does not and why, within the
 * check's bound; no key needed; `/healthz` unchanged. Plugins with a scripted `ready` are injected
 * by reference; the real ones are storage-unstorage (memory, fs, redis) and ratelimit-redis, on the
 * Redis at REDIS_URL (skipped with a message when unreachable, failed under CI=true) and on a
 * closed port of 127.0.0.1 for a Redis that is down.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { closedPort } from "./helpers/closed-port.ts";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { defineRateLimiter, defineStorage, type Middleware, type ModelmuxConfig, type RateLimiter, type Storage } from "@modelmux/core";
import { REDIS_URL, redisGate } from "../plugins/storage-unstorage/test/redis-gate.ts";
import { startHarness, testConfig, TRANSPORTS, type Harness } from "./helpers/harness.ts";

const { skip } = await redisGate("GET /readyz on Redis (end to end)");

const ECHO = { echo: { plugin: "provider-echo", models: ["echo-1"] } };
const dir = mkdtempSync(join(tmpdir(), "modelmux-readyz-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What the scripted plugins' `ready` does; `calls` counts how often it was asked. */
const script = { storage: (): Promise<void> | void => undefined, limiter: (): Promise<void> | void => undefined, calls: 0 };
const unused = () => Promise.reject(new Error("not used by these tests"));
const scriptedStorage = defineStorage({
  contract: 2,
  name: "scripted",
  optionsSchema: { type: "object" },
  setup: (): Storage => ({
    saveCompletion: unused,
    getCompletion: unused,
    listCompletions: unused,
    updateMetadata: unused,
    deleteCompletion: unused,
    ready: () => (script.calls++, script.storage()),
  }),
});
const scriptedLimiter = defineRateLimiter({
  name: "scripted",
  optionsSchema: { type: "object" },
  setup: (): RateLimiter => ({
    acquire: async () => ({ allowed: true, retryAfterMs: 0, states: [] }),
    settle: async () => {},
    ready: () => script.limiter(),
  }),
});
const SCRIPTED: ModelmuxConfig = testConfig(ECHO, {
  storage: { plugin: "scripted" },
  rate_limit: { plugin: "scripted-limiter", app: { requests: 100, window: "60s" } },
});
const PLUGINS = { scripted: scriptedStorage, "scripted-limiter": scriptedLimiter };


/** The 503 envelope; returns its message. */
async function expectNotReady(res: Response): Promise<string> {
  expect(res.status).toBe(503);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(res.headers.get("cache-control")).toBe("no-store");
  const body = (await res.json()) as { error: { message: string } };
  expect(body.error).toMatchObject({ type: "api_error", code: "not_ready", param: null });
  expect(body.error.message).toMatch(/^Not ready: /);
  return body.error.message;
}

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  Object.assign(script, { storage: () => undefined, limiter: () => undefined, calls: 0 });
});

describe.each(TRANSPORTS)("GET /readyz over %s", (transport) => {
  const start = async (config: ModelmuxConfig) => (h = await startHarness(config, transport, { plugins: PLUGINS }));

  it("is ready with no plugin to check, needs no key, answers HEAD, and /healthz is unchanged", async () => {
    const r = await start(testConfig(ECHO));
    const res = await r.request("/readyz");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("x-request-id")).toMatch(/\S/);
    expect(await res.json()).toEqual({ status: "ready", checks: {} });
    const head = await r.request("/readyz", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    // A probe's stray credential changes nothing.
    expect((await r.request("/readyz", { headers: { authorization: "Bearer not-a-key" } })).status).toBe(200);
    expect((await r.request("/readyz", { method: "POST" })).status).toBe(405);
    expect(await (await r.request("/healthz")).json()).toEqual({ status: "ok" });
  });

  it("names each checked plugin as the config does; memory ones have nothing to ask", async () => {
    const r = await start(testConfig(ECHO, { storage: { plugin: "storage-unstorage", options: { driver: "memory" } }, rate_limit: { app: { requests: 10, window: "60s" } } }));
    expect(await (await r.request("/readyz")).json()).toEqual({
      status: "ready",
      checks: { storage: { plugin: "storage-unstorage", status: "ready" }, rate_limit: { plugin: "ratelimit-memory", status: "ready" } },
    });
  });

  it("is 503 while a plugin's ready throws or rejects, naming each such plugin and why, and ready again once it answers", async () => {
    const r = await start(SCRIPTED);
    script.storage = () => {
      throw new Error("the disk\nis full");
    };
    script.limiter = () => Promise.reject(new Error("no quorum"));
    const message = await expectNotReady(await r.request("/readyz"));
    expect(message).toBe("Not ready: storage (plugin scripted): the disk is full; rate_limit (plugin scripted-limiter): no quorum.");
    script.limiter = () => undefined;
    expect(await expectNotReady(await r.request("/readyz"))).toBe("Not ready: storage (plugin scripted): the disk is full.");
    script.storage = async () => {};
    const ready = await r.request("/readyz");
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: "ready", checks: { storage: { plugin: "scripted", status: "ready" }, rate_limit: { plugin: "scripted-limiter", status: "ready" } } });
  });

  it("asks again on every probe, and probes at the same time share one check", async () => {
    // Counts the probes that reached their handler, which asks for the check before it returns.
    let arrived = 0;
    const counter: Middleware = function countProbes(_event, next) {
      const handled = next();
      arrived += 1;
      return handled;
    };
    h = await startHarness(SCRIPTED, transport, { plugins: PLUGINS, middleware: (defaults) => [...defaults, counter] });
    const r = h;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    script.storage = () => held;
    const probes = Array.from({ length: 5 }, () => r.request("/readyz"));
    // Bounded wait for every probe to join the check still held.
    for (let i = 0; i < 400 && arrived < 5; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(arrived).toBe(5);
    release();
    expect((await Promise.all(probes)).map((res) => res.status)).toEqual([200, 200, 200, 200, 200]);
    expect(script.calls).toBe(1);
    script.storage = () => undefined;
    expect((await r.request("/readyz")).status).toBe(200);
    expect(script.calls).toBe(2);
  });

  it("fs storage: ready when its folder takes files; 503 naming the folder when it cannot", async () => {
    const r = await start(testConfig(ECHO, { storage: { plugin: "storage-unstorage", options: { driver: "fs", base: join(dir, transport, "data") } } }));
    expect((await r.request("/readyz")).status).toBe(200);
    await r.close();
    const file = join(dir, `${transport}-file`);
    writeFileSync(file, "not a folder");
    const broken = await start(testConfig(ECHO, { storage: { plugin: "storage-unstorage", options: { driver: "fs", base: join(file, "data") } } }));
    const message = await expectNotReady(await broken.request("/readyz"));
    expect(message).toContain(`storage (plugin storage-unstorage): [storage:unstorage] the folder ${join(file, "data")} does not take files: ENOTDIR`);
  });

  it("a Redis that is down: 503 naming the storage and the limiter, each with its reason", async () => {
    const url = `redis://127.0.0.1:${await closedPort()}`;
    const r = await start(
      testConfig(ECHO, {
        storage: { plugin: "storage-unstorage", options: { driver: "redis", url } },
        rate_limit: { plugin: "ratelimit-redis", options: { url, connect_timeout_ms: 300 }, app: { requests: 10, window: "60s" } },
      }),
    );
    const message = await expectNotReady(await r.request("/readyz"));
    const host = url.slice("redis://".length);
    expect(message).toContain(`storage (plugin storage-unstorage): [storage:unstorage] Redis at ${host} did not answer PING: connect ECONNREFUSED ${host}`);
    expect(message).toContain(`rate_limit (plugin ratelimit-redis): Redis at ${host} did not answer PING: connect ECONNREFUSED ${host}`);
    // Neither waited for the core's bound: each plugin's own timeout or refusal answered first.
    expect(message).not.toContain("did not answer within");
  });

  it.skipIf(skip !== undefined)("a Redis that answers: ready", async () => {
    const prefix = `modelmux-test:${process.pid}-readyz`;
    const r = await start(
      testConfig(ECHO, {
        storage: { plugin: "storage-unstorage", options: { driver: "redis", url: REDIS_URL, prefix } },
        rate_limit: { plugin: "ratelimit-redis", options: { url: REDIS_URL, prefix: `${prefix}:rl:` }, app: { requests: 10, window: "60s" } },
      }),
    );
    const res = await r.request("/readyz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ready", checks: { storage: { plugin: "storage-unstorage", status: "ready" }, rate_limit: { plugin: "ratelimit-redis", status: "ready" } } });
  });
});

describe("GET /readyz with a plugin that never answers", () => {
  it("is 503 once the check's bound (2 s) is up, naming the plugin", async () => {
    h = await startHarness(SCRIPTED, "http", { plugins: PLUGINS });
    script.limiter = () => new Promise<void>(() => {});
    const message = await expectNotReady(await h.request("/readyz"));
    expect(message).toBe("Not ready: rate_limit (plugin scripted-limiter): did not answer within 2 s.");
  }, 10_000);
});
