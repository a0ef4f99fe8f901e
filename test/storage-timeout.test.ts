/**
 * A storage backend that stalls or fails (README, "Stored completions" and "Errors"): every request that
 * needs it answers 500 `storage_error` within about the storage's timeout, reads as well as
 * writes, and the router works again once the backend is back.
 * - Redis behind a local TCP proxy that stops forwarding (never the shared server itself): store,
 *   list, get, update, delete, messages and an image URL, with the plugin's default command timeout;
 *   and, on a router of its own with a longer command timeout, a pause past it, which fails the
 *   request it held and no other.
 * - A storage plugin that never answers: the core's own bound (`storage.timeout`).
 * - A storage plugin whose reads throw: `storage_error`, not the 500 "this is a bug".
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineStorage, type ModelmuxConfig, type Storage } from "@modelmux/core";
import { createLogger } from "../core/src/logger.ts";
import { startTcpProxy, type TcpProxy } from "./fixtures/tcp-proxy.ts";
import { postJson, startHarness, testConfig, TEST_KEY, type Harness } from "./helpers/harness.ts";
import { sleep, until } from "./helpers/wait.ts";
import { deletePrefix, REDIS_URL, redisGate } from "../plugins/storage-unstorage/test/redis-gate.ts";

const { skip: skipRedis } = await redisGate("storage timeout on redis");
const redisPrefix = `modelmux-test-stall-${process.pid}-${Date.now()}`;
afterAll(async () => {
  if (!skipRedis) await deletePrefix(redisPrefix);
});

const auth = { authorization: `Bearer ${TEST_KEY}` };
/** Far longer than any storage timeout: a request still waiting by then hangs on the backend. */
const CLIENT_PATIENCE_MS = 8_000;

interface Answer {
  status: number;
  code: string | undefined;
  message: string;
  ms: number;
}

async function call(h: Harness, path: string, init: RequestInit = {}): Promise<Answer> {
  const started = performance.now();
  const res = await h.request(path, { ...init, headers: { ...auth, ...init.headers }, signal: AbortSignal.timeout(CLIENT_PATIENCE_MS) });
  const text = await res.text();
  const body = res.headers.get("content-type")?.includes("json") ? (JSON.parse(text) as { error?: { code?: string; message?: string } }) : {};
  return { status: res.status, code: body.error?.code, message: body.error?.message ?? "", ms: performance.now() - started };
}

function expectStorageError(answer: Answer, what: string): void {
  expect({ what, status: answer.status, code: answer.code }).toEqual({ what, status: 500, code: "storage_error" });
  expect(answer.message, what).toMatch(/storage backend failed/);
  expect(answer.message, what).not.toMatch(/bug/);
}

const chatBody = { model: "echo/echo-1", store: true, messages: [{ role: "user", content: "kept" }] };

/** The router on Redis reached through a TCP proxy of its own, with one completion and one image stored. */
interface ProxiedRedis {
  proxy: TcpProxy;
  h: Harness;
  storedId: string;
  imagePath: string;
  /** The router's error log lines. */
  log: string[];
}

async function startProxiedRedis(storage: { command_timeout_ms?: number; timeout?: string } = {}): Promise<ProxiedRedis> {
  const target = new URL(REDIS_URL);
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
  const url = new URL(REDIS_URL);
  url.host = `127.0.0.1:${proxy.port}`;
  const log: string[] = [];
  const logger = createLogger({ level: "error", format: "json", write: (text) => log.push(text) });
  const { command_timeout_ms, timeout } = storage;
  const options = { driver: "redis", url: url.href, prefix: redisPrefix, ...(command_timeout_ms !== undefined && { command_timeout_ms }) };
  const config = testConfig({ echo: { plugin: "provider-echo", models: ["echo-1"] } }, { storage: { plugin: "storage-unstorage", options, ...(timeout !== undefined && { timeout }) } });
  const h = await startHarness(config, "http", { logger });
  const storedId = (await h.openai.chat.completions.create({ ...chatBody, messages: [{ role: "user", content: "before the stall" }] })).id;
  const image = await h.openai.images.generate({ model: "echo/echo-1", prompt: "a kept image", response_format: "url" });
  const imagePath = new URL(image.data![0]!.url!).pathname;
  expect((await call(h, imagePath)).status).toBe(200);
  return { proxy, h, storedId, imagePath, log };
}

async function stopProxiedRedis(redis: ProxiedRedis | undefined): Promise<void> {
  await redis?.h.close();
  await redis?.proxy.close();
}

describe.skipIf(skipRedis !== undefined)("a Redis pause longer than the command timeout", () => {
  // The pause holds the first command past its timeout and must end within the second's: the
  // second is sent half a timeout after the first, so half a timeout (1.5 s) is the margin a
  // loaded machine has to land `pass` in. The core's own bound is set past both.
  const COMMAND_TIMEOUT_MS = 3_000;
  let redis: ProxiedRedis;
  beforeAll(async () => void (redis = await startProxiedRedis({ command_timeout_ms: COMMAND_TIMEOUT_MS, timeout: "15s" })));
  afterAll(() => stopProxiedRedis(redis));

  it("fails only the command it held, not the others on the connection", async () => {
    const { proxy, h, storedId } = redis;
    const connections = proxy.connections;
    proxy.setMode("stall");
    try {
      const slow = call(h, `/v1/chat/completions/${storedId}`);
      await sleep(COMMAND_TIMEOUT_MS / 2);
      // Sent while the first waits: its own timeout ends later than the first one's.
      const later = call(h, `/v1/chat/completions/${storedId}/messages`);
      expectStorageError(await slow, "the command the pause held past its timeout");
      // Redis answers again (the held bytes flow, in order) while the second is within its timeout.
      proxy.setMode("pass");
      const answer = await later;
      expect({ status: answer.status, code: answer.code }).toEqual({ status: 200, code: undefined });
    } finally {
      proxy.setMode("pass");
    }
    // The connection was kept: a slow answer is not a dead connection.
    expect(proxy.connections).toBe(connections);
    expect((await call(h, `/v1/chat/completions/${storedId}`)).status).toBe(200);
  }, 20_000);
});

describe.skipIf(skipRedis !== undefined)("Redis storage stalled behind a TCP proxy", () => {
  let redis: ProxiedRedis;
  // The plugin's default command timeout (1 s) and the core's default bound (2 s).
  beforeAll(async () => void (redis = await startProxiedRedis()));
  afterAll(() => stopProxiedRedis(redis));

  for (const mode of ["stall", "drop"] as const) {
    it(`${mode}: store, list, get, update, delete, messages and an image answer storage_error within about the timeout, then recover`, async () => {
      const { proxy, h, storedId, imagePath, log } = redis;
      proxy.setMode(mode);
      const answers = await Promise.all([
        call(h, "/v1/chat/completions", postJson(chatBody)),
        call(h, "/v1/chat/completions?limit=5"),
        call(h, "/v1/chat/completions?metadata[k]=v"),
        call(h, `/v1/chat/completions/${storedId}`),
        call(h, `/v1/chat/completions/${storedId}`, postJson({ metadata: { k: "v" } })),
        call(h, `/v1/chat/completions/${storedId}`, { method: "DELETE" }),
        call(h, `/v1/chat/completions/${storedId}/messages`),
        call(h, imagePath),
      ]);
      const names = ["store", "list", "list by metadata", "get", "update", "delete", "messages", "image"];
      answers.forEach((answer, i) => expectStorageError(answer, names[i]!));
      // The plugin's command timeout (1 s) or the core's bound (2 s) ends each; generous for a loaded machine.
      for (const [i, answer] of answers.entries()) expect(answer.ms, names[i]).toBeLessThan(CLIENT_PATIENCE_MS - 2_000);
      h.router.logger.flush?.();
      expect(log.join("\n")).toMatch(/"request_id"/);

      proxy.setMode("pass");
      let back: Answer | undefined;
      await until(async () => (back = await call(h, `/v1/chat/completions/${storedId}`)).status === 200, "the stored completion readable again", 10_000, 200);
      expect(back!.status).toBe(200);
      expect((await call(h, imagePath)).status).toBe(200);
      expect((await h.openai.chat.completions.list({ limit: 100 })).data.map((c) => c.id)).toContain(storedId);
    }, 30_000);
  }
});

/** A storage whose every call waits forever, or fails, as `behaviour` says. */
function brokenStorage(behaviour: "hang" | "throw"): Storage {
  const fail = <T>(): Promise<T> => (behaviour === "hang" ? new Promise<T>(() => {}) : Promise.reject(new Error("backend exploded")));
  return {
    saveCompletion: fail,
    getCompletion: fail,
    listCompletions: fail,
    updateMetadata: fail,
    deleteCompletion: fail,
    saveImage: fail,
    getImage: fail,
  };
}

for (const behaviour of ["hang", "throw"] as const) {
  describe(`a storage plugin that ${behaviour === "hang" ? "never answers (storage.timeout)" : "fails its reads"}`, () => {
    let h: Harness;
    beforeAll(async () => {
      const plugin = defineStorage({ contract: 2, name: "broken", optionsSchema: { type: "object" }, setup: () => brokenStorage(behaviour) });
      const config: ModelmuxConfig = testConfig({ echo: { plugin: "provider-echo", models: ["echo-1"] } }, { storage: { plugin: "broken", timeout: "300ms" } });
      h = await startHarness(config, "http", { plugins: { broken: plugin } });
    });
    afterAll(() => h.close());

    it("answers storage_error on every stored-completion endpoint and on an image URL", async () => {
      const answers = await Promise.all([
        call(h, "/v1/chat/completions", postJson(chatBody)),
        call(h, "/v1/chat/completions"),
        call(h, "/v1/chat/completions/chatcmpl-x"),
        call(h, "/v1/chat/completions/chatcmpl-x", postJson({ metadata: {} })),
        call(h, "/v1/chat/completions/chatcmpl-x", { method: "DELETE" }),
        call(h, "/v1/chat/completions/chatcmpl-x/messages"),
        call(h, "/files/images/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.png"),
      ]);
      ["store", "list", "get", "update", "delete", "messages", "image"].forEach((name, i) => expectStorageError(answers[i]!, name));
      const sdk = await h.openai.chat.completions.retrieve("chatcmpl-x").catch((error: unknown) => error);
      expect(sdk).toBeInstanceOf(OpenAI.InternalServerError);
    });
  });
}

describe("storage.timeout in the config", () => {
  it("is a duration; anything else is refused at start, naming the key", async () => {
    const config = testConfig({ echo: { plugin: "provider-echo", models: ["echo-1"] } }, { storage: { plugin: "storage-unstorage", options: { driver: "memory" }, timeout: "soon" } as ModelmuxConfig["storage"] });
    await expect(startHarness(config, "fetch")).rejects.toThrow(/storage\.timeout/);
  });
});
