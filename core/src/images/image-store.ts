/**
 * Generated images served by URL (docs/interface.md, "Images"): when a client asks for
 * `response_format: url` and the provider returned base64, the image is kept here and the client
 * gets `<router origin>/files/images/<token>.<ext>`. The token (192 random bits) is the only
 * credential, like a provider's signed URL; the store is keyed by its SHA-256, so whoever can read
 * the storage still cannot rebuild a URL from it. Images live 60 minutes.
 *
 * Kept in the storage plugin when it has `saveImage`/`getImage` (shared by every router instance
 * behind one Redis, say), else in this process's memory, bounded by `maxBytes` (oldest dropped).
 */
import { createHash, randomBytes } from "node:crypto";
import type { Storage, StoredImage } from "../plugin.ts";

export const IMAGE_URL_TTL_MS = 60 * 60 * 1000;

/** Where image URLs point; `:name` is `<token>.<ext>`. */
export const IMAGE_FILES_PATH = "/files/images";

export interface ImageStore {
  /** Keeps the image; returns the file name (`<token>.<ext>`) to put in its URL. */
  put(data: Buffer, contentType: string): Promise<string>;
  /**
   * The image a file name points at, or `undefined` (unknown, expired, malformed, or named with
   * another extension than its type's: a PNG is served as `.png` only).
   */
  get(name: string): Promise<StoredImage | undefined>;
}

export interface ImageStoreOptions {
  storage?: Storage;
  ttlMs?: number;
  /** Upper bound of the in-memory store, in bytes. Default 256 MiB. */
  maxBytes?: number;
  now?: () => number;
}

/** The file extension of each image type served, the only one its URL may end with. */
export const IMAGE_EXTENSIONS: Readonly<Record<string, string>> = { "image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "image/gif": "gif" };
const FILE_NAME = /^([A-Za-z0-9_-]{32})\.([a-z]{3,4})$/;

/** The content type of image bytes, from their signature; PNG when unknown (what providers default to). */
export function sniffImageType(data: Buffer): string {
  if (data.length >= 8 && data.readUInt32BE(0) === 0x89504e47) return "image/png";
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return "image/jpeg";
  if (data.length >= 12 && data.toString("latin1", 0, 4) === "RIFF" && data.toString("latin1", 8, 12) === "WEBP") return "image/webp";
  if (data.length >= 6 && data.toString("latin1", 0, 3) === "GIF") return "image/gif";
  return "image/png";
}

const keyOf = (token: string) => createHash("sha256").update(token).digest("hex");

/** In-process images, oldest first (one TTL for all, so insertion order is expiry order). */
function memoryImages(maxBytes: number, now: () => number) {
  const images = new Map<string, StoredImage>();
  let bytes = 0;
  const drop = (key: string, image: StoredImage) => {
    images.delete(key);
    bytes -= image.data.length;
  };
  return {
    async saveImage(key: string, image: StoredImage) {
      for (const [oldKey, old] of images) {
        if (old.expiresAt > now() && bytes + image.data.length <= maxBytes) break;
        drop(oldKey, old);
      }
      images.set(key, image);
      bytes += image.data.length;
    },
    async getImage(key: string) {
      const image = images.get(key);
      if (image && image.expiresAt <= now()) drop(key, image);
      return image && image.expiresAt > now() ? image : undefined;
    },
  };
}

export function createImageStore(options: ImageStoreOptions = {}): ImageStore {
  const now = options.now ?? (() => Date.now());
  const ttlMs = options.ttlMs ?? IMAGE_URL_TTL_MS;
  const storage = options.storage;
  const backend =
    storage?.saveImage && storage.getImage
      ? { saveImage: storage.saveImage.bind(storage), getImage: storage.getImage.bind(storage) }
      : memoryImages(options.maxBytes ?? 256 * 2 ** 20, now);
  return {
    async put(data, contentType) {
      const token = randomBytes(24).toString("base64url");
      await backend.saveImage(keyOf(token), { contentType, data, expiresAt: now() + ttlMs });
      return `${token}.${IMAGE_EXTENSIONS[contentType] ?? "bin"}`;
    },
    async get(name) {
      const match = FILE_NAME.exec(name);
      if (!match) return undefined;
      const image = await backend.getImage(keyOf(match[1]!));
      // A storage without expiry of its own may hand back an old one: the clock decides.
      if (!image || image.expiresAt <= now()) return undefined;
      // One URL per image: `<token>.gif` on a PNG would tell a browser or proxy the wrong type.
      return (IMAGE_EXTENSIONS[image.contentType] ?? "bin") === match[2] ? image : undefined;
    },
  };
}
