/**
 * Image generation through the router with the official openai SDK (docs/interface.md, "Images"),
 * offline on the echo provider: base64 and URL replies, URLs served without a key and gone after 60
 * minutes, every field validated, and fields a model does not take refused before any provider
 * call.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import OpenAI from "openai";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "../core/src/logger.ts";
import { deletePrefix, REDIS_URL, redisGate } from "../plugins/storage-unstorage/test/redis-gate.ts";
import { postJson, startHarness, testConfig, TRANSPORTS, type Harness } from "./helpers/harness.ts";

const PNG_SIGNATURE = "89504e470d0a1a0a";

for (const transport of TRANSPORTS) {
  describe(`images via provider-echo (${transport})`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await startHarness(testConfig({ echo: { plugin: "provider-echo", models: ["echo-1"] } }), transport);
    });
    afterAll(() => h.close());
    afterEach(() => vi.useRealTimers());

    it("returns n base64 PNGs when asked for b64_json", async () => {
      const reply = await h.openai.images.generate({ model: "echo/echo-1", prompt: "a red fox", n: 2, response_format: "b64_json" });
      expect(reply.data).toHaveLength(2);
      expect(reply.created).toBeGreaterThan(0);
      const png = Buffer.from(reply.data![0]!.b64_json!, "base64");
      expect(png.subarray(0, 8).toString("hex")).toBe(PNG_SIGNATURE);
      expect(reply.data![0]!.url).toBeUndefined();
    });

    it("serves a URL on itself for response_format url, without a key, as image/png", async () => {
      const reply = await h.openai.images.generate({ model: "echo/echo-1", prompt: "a blue whale", response_format: "url" });
      const url = reply.data![0]!.url!;
      expect(reply.data![0]!.b64_json).toBeUndefined();
      expect(url).toMatch(/\/files\/images\/[A-Za-z0-9_-]{32}\.png$/);
      expect(url.startsWith(h.baseURL.replace(/\/v1$/, ""))).toBe(true);
      const image = await h.request(new URL(url).pathname);
      expect(image.status).toBe(200);
      expect(image.headers.get("content-type")).toBe("image/png");
      const bytes = Buffer.from(await image.arrayBuffer());
      expect(bytes.subarray(0, 8).toString("hex")).toBe(PNG_SIGNATURE);
      expect(Number(image.headers.get("content-length"))).toBe(bytes.length);
      // Two URLs for two images, never the same token.
      const again = await h.openai.images.generate({ model: "echo/echo-1", prompt: "a blue whale", response_format: "url" });
      expect(again.data![0]!.url).not.toBe(url);
    });

    it("an image URL stops working 60 minutes after creation (404 in the envelope)", async () => {
      vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
      const reply = await h.openai.images.generate({ model: "echo/echo-1", prompt: "a clock", response_format: "url" });
      const path = new URL(reply.data![0]!.url!).pathname;
      vi.setSystemTime(Date.now() + 59 * 60_000);
      expect((await h.request(path)).status).toBe(200);
      vi.setSystemTime(Date.now() + 2 * 60_000);
      const gone = await h.request(path);
      expect(gone.status).toBe(404);
      expect(await gone.json()).toMatchObject({ error: { type: "invalid_request_error", code: "not_found" } });
    });

    it("a guessed or malformed image URL is 404 in the envelope", async () => {
      for (const name of ["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.png", "x.png", "..%2F..%2Fetc%2Fpasswd"]) {
        const res = await h.request(`/files/images/${name}`);
        expect(res.status).toBe(404);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe("not_found");
      }
    });

    it("fields the model does not take are refused with the field named", async () => {
      for (const [field, value] of [
        ["style", "vivid"],
        ["background", "transparent"],
        ["size", "1024x1024"],
        ["quality", "hd"],
        ["output_format", "webp"],
      ] as const) {
        const error = await h.openai.images.generate({ model: "echo/echo-1", prompt: "p", [field]: value } as OpenAI.ImageGenerateParams).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OpenAI.BadRequestError);
        expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: "unsupported_feature", param: field });
        expect((error as InstanceType<typeof OpenAI.APIError>).message).toContain("Model 'echo/echo-1' does not support");
      }
    });

    it("validates every field with the interface's limits", async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ model: "echo/echo-1" }, "prompt"],
        [{ prompt: "p" }, "model"],
        [{ model: "echo/echo-1", prompt: "p", n: -1 }, "n"],
        [{ model: "echo/echo-1", prompt: "p", n: 11 }, "n"],
        [{ model: "echo/echo-1", prompt: "p", output_compression: 101 }, "output_compression"],
        [{ model: "echo/echo-1", prompt: "p", response_format: "gif" }, "response_format"],
        [{ model: "echo/echo-1", prompt: "p", style: "bold" }, "style"],
        [{ model: "echo/echo-1", prompt: "p", colour: "red" }, "colour"],
        [{ model: "echo/echo-1", prompt: 5 }, "prompt"],
      ];
      for (const [body, param] of cases) {
        const res = await h.request("/v1/images/generations", postJson(body));
        expect(res.status, JSON.stringify(body)).toBe(400);
        const { error } = (await res.json()) as { error: { param: string; type: string; message: string } };
        expect(error.param, JSON.stringify(body)).toBe(param);
        expect(error.type).toBe("invalid_request_error");
        expect(error.message).toContain(param);
      }
    });

    it("an unknown model is 404 model_not_found; other methods are 405", async () => {
      const res = await h.request("/v1/images/generations", postJson({ model: "echo/nope", prompt: "p" }));
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("model_not_found");
      const get = await h.request("/v1/images/generations", { headers: { authorization: `Bearer ${h.openai.apiKey}` } });
      expect(get.status).toBe(405);
      expect(get.headers.get("allow")).toBe("POST");
    });
  });
}

describe("image URLs in the log", () => {
  it("the access log never holds an image URL's token", async () => {
    const lines: string[] = [];
    const h = await startHarness(testConfig({ echo: { plugin: "provider-echo", models: ["echo-1"] } }), "http", {
      logger: createLogger({ level: "debug", format: "json", write: (text: string) => lines.push(text) }),
    });
    try {
      const reply = await h.openai.images.generate({ model: "echo/echo-1", prompt: "secret", response_format: "url" });
      const path = new URL(reply.data![0]!.url!).pathname;
      expect((await h.request(path)).status).toBe(200);
      h.router.logger.flush();
      const token = path.split("/").at(-1)!.split(".")[0]!;
      expect(lines.join("\n")).toContain("GET /files/images/[token]");
      expect(lines.join("\n")).not.toContain(token);
    } finally {
      await h.close();
    }
  });
});

const { skip: redisSkip } = await redisGate("image URLs across routers (redis)");

describe("image URLs kept by the storage plugin", () => {
  const echo = { echo: { plugin: "provider-echo", models: ["echo-1"] } };

  it.skipIf(redisSkip !== undefined)("two routers behind one Redis: a URL from one is served by the other", async () => {
    const prefix = `modelmux-test-img-e2e:${randomBytes(4).toString("hex")}`;
    const storage = { plugin: "storage-unstorage", options: { driver: "redis", url: REDIS_URL, prefix } };
    const a = await startHarness(testConfig(echo, { storage }), "http");
    const b = await startHarness(testConfig(echo, { storage }), "http");
    try {
      const reply = await a.openai.images.generate({ model: "echo/echo-1", prompt: "shared", response_format: "url" });
      const res = await b.request(new URL(reply.data![0]!.url!).pathname);
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer()).subarray(0, 8).toString("hex")).toBe(PNG_SIGNATURE);
    } finally {
      await a.close();
      await b.close();
      await deletePrefix(prefix);
    }
  });

  it("on fs, a URL keeps working after a router restart", async () => {
    const base = mkdtempSync(join(tmpdir(), "modelmux-img-e2e-"));
    const storage = { plugin: "storage-unstorage", options: { driver: "fs", base } };
    try {
      const first = await startHarness(testConfig(echo, { storage }), "fetch");
      const reply = await first.openai.images.generate({ model: "echo/echo-1", prompt: "kept", response_format: "url" });
      await first.close();
      const second = await startHarness(testConfig(echo, { storage }), "fetch");
      try {
        const res = await second.request(new URL(reply.data![0]!.url!).pathname);
        expect(res.status).toBe(200);
        expect(res.headers.get("content-type")).toBe("image/png");
      } finally {
        await second.close();
      }
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});
