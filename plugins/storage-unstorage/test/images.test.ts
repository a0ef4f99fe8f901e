/**
 * Generated images kept for their URLs (`saveImage`/`getImage`) on memory, fs and Redis: bytes and
 * content type back as saved, gone after their expiry, kept across a restart on fs and Redis, and
 * keys that are not the core's digests refused.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Storage } from "@modelmux/core";
import { Redis } from "ioredis";
import { afterAll, describe, expect, test } from "vitest";
import { setupStorage } from "./helpers.ts";
import { deletePrefix, REDIS_URL, redisGate } from "./redis-gate.ts";

const { skip: redisSkip } = await redisGate("storage-unstorage images (redis)");
const RUN = `modelmux-test-img:${process.pid}-${randomBytes(3).toString("hex")}`;
const dirs: string[] = [];
const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "modelmux-img-"));
  dirs.push(dir);
  return dir;
};
afterAll(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  if (redisSkip === undefined) await deletePrefix(RUN);
});

const keyOf = (token: string) => createHash("sha256").update(token).digest("hex");
const png = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");

const drivers: Array<{ name: string; skip?: string; create(): Promise<{ storage: Storage; reopen(): Promise<Storage> | undefined }> }> = [
  { name: "memory", create: async () => ({ storage: await setupStorage({ driver: "memory" }), reopen: () => undefined }) },
  {
    name: "fs",
    create: async () => {
      const base = freshDir();
      return { storage: await setupStorage({ driver: "fs", base }), reopen: () => setupStorage({ driver: "fs", base }) };
    },
  },
  {
    name: "redis",
    ...(redisSkip !== undefined && { skip: redisSkip }),
    create: async () => {
      const prefix = `${RUN}:${randomBytes(3).toString("hex")}`;
      return { storage: await setupStorage({ driver: "redis", url: REDIS_URL, prefix }), reopen: () => setupStorage({ driver: "redis", url: REDIS_URL, prefix }) };
    },
  },
];

for (const driver of drivers) {
  describe.skipIf(driver.skip !== undefined)(`images on ${driver.name}`, () => {
    test("an image comes back as saved; an unknown key is undefined", async () => {
      const { storage } = await driver.create();
      const key = keyOf("token-1");
      await storage.saveImage!(key, { contentType: "image/png", data: png, expiresAt: Date.now() + 60_000 });
      const image = await storage.getImage!(key);
      expect(image?.contentType).toBe("image/png");
      expect(Buffer.compare(image!.data, png)).toBe(0);
      expect(await storage.getImage!(keyOf("token-2"))).toBeUndefined();
      await storage.close?.();
    });

    test("an expired image is gone", async () => {
      const { storage } = await driver.create();
      const key = keyOf("short");
      await storage.saveImage!(key, { contentType: "image/png", data: png, expiresAt: Date.now() + 150 });
      expect(await storage.getImage!(key)).toBeDefined();
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await storage.getImage!(key)).toBeUndefined();
      await storage.close?.();
    });

    test("a key that is not a SHA-256 in hex is refused", async () => {
      const { storage } = await driver.create();
      await expect(storage.saveImage!("../../etc/passwd", { contentType: "image/png", data: png, expiresAt: Date.now() + 60_000 })).rejects.toThrow(/image key/);
      await storage.close?.();
    });

    test("a storage opened again on the same place serves the image (restart)", async () => {
      const { storage, reopen } = await driver.create();
      const key = keyOf("kept");
      await storage.saveImage!(key, { contentType: "image/jpeg", data: png, expiresAt: Date.now() + 60_000 });
      await storage.close?.();
      const again = await reopen();
      if (!again) return; // memory: nothing survives by design
      expect((await again.getImage!(key))?.contentType).toBe("image/jpeg");
      await again.close?.();
    });
  });
}

test("fs: images an earlier process left behind expired are swept when the storage starts", async () => {
  const base = freshDir();
  const first = await setupStorage({ driver: "fs", base });
  await first.saveImage!(keyOf("old"), { contentType: "image/png", data: png, expiresAt: Date.now() + 50 });
  await first.saveImage!(keyOf("fresh"), { contentType: "image/png", data: png, expiresAt: Date.now() + 60_000 });
  await first.close?.();
  await new Promise((resolve) => setTimeout(resolve, 80));
  const second = await setupStorage({ driver: "fs", base });
  await second.close?.(); // waits for the start-up sweep
  expect(readdirSync(join(base, "modelmux", "img"))).toEqual([keyOf("fresh")]);
});

describe.skipIf(redisSkip !== undefined)("images on redis: native expiry", () => {
  test("the key carries a PX expiry close to the image's", async () => {
    const prefix = `${RUN}:px`;
    const storage = await setupStorage({ driver: "redis", url: REDIS_URL, prefix });
    const key = keyOf("px");
    await storage.saveImage!(key, { contentType: "image/png", data: png, expiresAt: Date.now() + 60_000 });
    const raw = new Redis(REDIS_URL);
    try {
      const pttl = await raw.pttl(`${prefix}:img:${key}`);
      expect(pttl).toBeGreaterThan(55_000);
      expect(pttl).toBeLessThanOrEqual(60_000);
    } finally {
      raw.disconnect();
      await storage.close?.();
    }
  });
});
