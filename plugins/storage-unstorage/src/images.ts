/**
 * Generated images kept for their URLs (docs/interface.md, "Images"; the core's
 * `Storage.saveImage/getImage`). The core hands a key (a SHA-256 in hex, never the URL's token) and
 * an expiry 60 minutes ahead.
 *
 * - memory and fs: `img:<key>` holds `{contentType, expiresAt, data}` (data in base64) as JSON;
 *   an expired image is deleted when met, and each save deletes the images this process saved
 *   that have expired since (in saving order, which is expiry order). Images an earlier process
 *   left are swept once, in the background, when the storage starts.
 * - redis: `<prefix>:img:<key>` holds a JSON header line and the raw bytes, with a native `PX`
 *   expiry, so every router instance behind the Redis serves every image.
 */
import type { StoredImage } from "@modelmux/core";
import type { Redis } from "ioredis";
import type { KvStore } from "./kv-store.ts";

export interface ImageStorage {
  saveImage(key: string, image: StoredImage): Promise<void>;
  getImage(key: string): Promise<StoredImage | undefined>;
}

const IMAGE_KEY = /^[0-9a-f]{64}$/;

/** Keys come from the core; anything else is refused rather than turned into a path. */
function checkKey(key: string): string {
  if (!IMAGE_KEY.test(key)) throw new Error("an image key must be 64 hex digits");
  return key;
}

function decodeKvImage(text: string | undefined): StoredImage | undefined {
  if (text === undefined) return undefined;
  try {
    const { contentType, expiresAt, data } = JSON.parse(text) as { contentType?: unknown; expiresAt?: unknown; data?: unknown };
    if (typeof contentType !== "string" || typeof expiresAt !== "number" || typeof data !== "string") return undefined;
    return { contentType, expiresAt, data: Buffer.from(data, "base64") };
  } catch {
    return undefined;
  }
}

/** Images on the memory or fs store. `listKeys` lists the stored `img:` keys, for the start-up sweep. */
export function kvImages(store: KvStore, listKeys: () => Promise<string[]>, later: (what: string, task: () => Promise<void>) => void): ImageStorage {
  const saved: Array<{ key: string; expiresAt: number }> = [];
  const keyOf = (key: string) => `img:${checkKey(key)}`;

  later("sweeping expired images", async () => {
    for (const key of await listKeys()) {
      const image = decodeKvImage(await store.get(`img:${key}`));
      if (!image || image.expiresAt <= Date.now()) await store.remove(`img:${key}`);
    }
  });

  return {
    async saveImage(key, image) {
      await store.set(keyOf(key), JSON.stringify({ contentType: image.contentType, expiresAt: image.expiresAt, data: image.data.toString("base64") }));
      saved.push({ key, expiresAt: image.expiresAt });
      while (saved.length > 0 && saved[0]!.expiresAt <= Date.now()) {
        const old = saved.shift()!;
        later("deleting an expired image", () => store.remove(keyOf(old.key)));
      }
    },
    async getImage(key) {
      const image = decodeKvImage(await store.get(keyOf(key)));
      if (image && image.expiresAt <= Date.now()) {
        await store.remove(keyOf(key));
        return undefined;
      }
      return image;
    },
  };
}

/** Images on Redis, with Redis's own expiry. */
export function redisImages(redis: () => Redis, prefix: string): ImageStorage {
  const keyOf = (key: string) => `${prefix}:img:${checkKey(key)}`;
  return {
    async saveImage(key, image) {
      const ttl = Math.ceil(image.expiresAt - Date.now());
      if (ttl <= 0) return;
      const header = Buffer.from(`${JSON.stringify({ contentType: image.contentType, expiresAt: image.expiresAt })}\n`);
      await redis().set(keyOf(key), Buffer.concat([header, image.data]), "PX", ttl);
    },
    async getImage(key) {
      const value = await redis().getBuffer(keyOf(key));
      if (!value) return undefined;
      const end = value.indexOf(0x0a);
      if (end < 0) return undefined;
      try {
        const { contentType, expiresAt } = JSON.parse(value.subarray(0, end).toString("utf8")) as { contentType: string; expiresAt: number };
        return { contentType, expiresAt, data: value.subarray(end + 1) };
      } catch {
        return undefined;
      }
    },
  };
}
