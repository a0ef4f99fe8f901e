/**
 * HTTP details a production client or load balancer relies on: HEAD where GET is served, the
 * scheme named on a 401, and a ceiling on `n` so one request cannot make a reply of any size.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger, defineProvider } from "@modelmux/core";
import type { RouterOptions } from "../core/src/router.ts";
import { postJson, startHarness, testConfig, TEST_KEY, TRANSPORTS, type Harness } from "./helpers/harness.ts";

for (const transport of TRANSPORTS) {
  describe(`HTTP semantics (${transport})`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await startHarness(testConfig({ echo: { plugin: "provider-echo", models: ["echo-1"] } }), transport);
    });
    afterAll(() => h.close());

    it("answers HEAD on /healthz and /v1/models, and lists HEAD in allow", async () => {
      expect((await h.request("/healthz", { method: "HEAD" })).status).toBe(200);
      const models = await h.request("/v1/models", { method: "HEAD", headers: { authorization: `Bearer ${TEST_KEY}` } });
      expect(models.status).toBe(200);
      expect(await models.text()).toBe("");
      const refused = await h.request("/v1/models", { method: "POST", headers: { authorization: `Bearer ${TEST_KEY}` } });
      expect(refused.headers.get("allow")).toBe("GET, HEAD");
    });

    it("answers a path with broken percent-encoding with a 400 that says so", async () => {
      const res = await h.request("/v1/chat/completions/%E0%A4%A", { headers: { authorization: `Bearer ${TEST_KEY}` } });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { message: string } }).error.message).toContain("percent-encoding");
    });

    it("names the Bearer scheme on a 401", async () => {
      const res = await h.request("/v1/models");
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="modelmux"');
    });

    it("refuses n above 128, naming the field", async () => {
      const res = await h.request("/v1/chat/completions", postJson({ model: "echo/echo-1", n: 129, messages: [{ role: "user", content: "x" }] }));
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: { param: "n", message: "n: must be <= 128" } });
      const ok = await h.request("/v1/chat/completions", postJson({ model: "echo/echo-1", n: 128, max_completion_tokens: 1, messages: [{ role: "user", content: "x" }] }));
      expect(ok.status).toBe(200);
    });
  });
}

/**
 * Runs `hangUp` against a router on a real port whose log is kept, then checks the request was
 * logged as closed (499) and nothing as an error.
 */
async function expectLoggedAsClosed(providers: Parameters<typeof testConfig>[0], options: RouterOptions, hangUp: (h: Harness) => Promise<void>) {
  const lines: string[] = [];
  const h = await startHarness(testConfig(providers), "http", {
    ...options,
    logger: createLogger({ level: "info", format: "json", write: (text) => void lines.push(...text.trim().split("\n")) }),
  });
  try {
    await hangUp(h);
    await new Promise((resolve) => setTimeout(resolve, 200));
    h.router.logger.flush();
    const records = lines.map((line) => JSON.parse(line) as { level: string; status?: number });
    expect(records.filter((r) => r.level === "error")).toEqual([]);
    expect(records.find((r) => r.status !== undefined)?.status).toBe(499);
  } finally {
    await h.close();
  }
}

describe("a client that hangs up in the middle of its body", () => {
  it("is logged as a closed request, not as an internal error", async () => {
    await expectLoggedAsClosed({ echo: { plugin: "provider-echo", models: ["echo-1"] } }, {}, async (h) => {
      const { port } = new URL(h.baseURL);
      const socket = connect(Number(port), "127.0.0.1");
      await new Promise((resolve) => socket.once("connect", resolve));
      socket.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${TEST_KEY}\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"model":"echo/`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      socket.destroy();
    });
  });
});

describe("a client that hangs up while the provider works", () => {
  it("is logged as a closed request, not as an internal error", async () => {
    const waiting = defineProvider({
      name: "waiting",
      optionsSchema: { type: "object" },
      setup: () => ({
        capabilities: () => ({}),
        chat: (_request, call) =>
          new Promise((_resolve, reject) => call.signal.addEventListener("abort", () => reject(Object.assign(new Error("aborted"), { name: "AbortError" })))),
        chatStream: async () => (async function* () {})(),
      }),
    });
    await expectLoggedAsClosed({ w: { plugin: "waiting", models: ["m"] } }, { plugins: { waiting } }, async (h) => {
      const controller = new AbortController();
      const pending = h.request("/v1/chat/completions", { ...postJson({ model: "w/m", messages: [{ role: "user", content: "x" }] }), signal: controller.signal }).catch(() => "aborted");
      await new Promise((resolve) => setTimeout(resolve, 200));
      controller.abort();
      expect(await pending).toBe("aborted");
    });
  });
});
