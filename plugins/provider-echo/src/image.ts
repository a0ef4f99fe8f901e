/**
 * Echo image generation: a small valid PNG (16×16, one colour taken from the prompt), so the image
 * path, including the core's URL serving, works offline and deterministically.
 */
import { createHash } from "node:crypto";
import { crc32, deflateSync } from "node:zlib";
import type { ImageGenerationRequest, ImageOption, ImagesResponse } from "@modelmux/core";
import { MAX_TEXT_CHARS } from "./bounds.ts";
import { cutChars } from "./chars.ts";

const SIDE = 16;
const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "latin1");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

/** A SIDE×SIDE RGB PNG filled with `rgb`. */
export function solidPng(rgb: readonly [number, number, number]): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(SIDE, 0);
  header.writeUInt32BE(SIDE, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // colour type: RGB
  const row = Buffer.alloc(1 + SIDE * 3); // filter byte 0, then the pixels
  for (let x = 0; x < SIDE; x++) row.set(rgb, 1 + x * 3);
  const pixels = Buffer.concat(Array.from({ length: SIDE }, () => row));
  return Buffer.concat([SIGNATURE, chunk("IHDR", header), chunk("IDAT", deflateSync(pixels)), chunk("IEND", Buffer.alloc(0))]);
}

/** Only `n` among the optional fields: anything else gets the core's 400, as a real model would. */
export const ECHO_IMAGE_OPTIONS: readonly ImageOption[] = ["n"];

export function generateImages(request: ImageGenerationRequest): ImagesResponse {
  const digest = createHash("sha256").update(request.prompt).digest();
  const png = solidPng([digest[0]!, digest[1]!, digest[2]!]).toString("base64");
  const count = request.n ?? 1;
  // Like the chat text, the prompt sent back is bounded (`bounds.ts`), once per image.
  const revised = cutChars(request.prompt, MAX_TEXT_CHARS);
  return {
    created: Math.floor(Date.now() / 1000),
    data: Array.from({ length: count }, () => ({ b64_json: png, revised_prompt: revised })),
    output_format: "png",
    size: `${SIDE}x${SIDE}`,
  };
}
