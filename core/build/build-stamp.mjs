// @ts-check
/**
 * What a build records in each `dist/`: the source fingerprint it was made from (the core's is the
 * one the bin checks) and the files it wrote (so the next build can keep its chunks, see
 * `build-dist.mjs`).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const STAMP_FILE = ".build-stamp.json";

/**
 * @typedef {object} BuildStamp
 * @property {string} fingerprint `sourceFingerprint()` when the build started
 * @property {string[]} files the files the build wrote, relative to `dist/`
 * @property {boolean} [pack] made for packing: with declarations, without earlier chunks
 */

/**
 * @param {string} distDir
 * @returns {BuildStamp | undefined} undefined when `dist/` or its stamp is missing or unreadable
 */
export function readBuildStamp(distDir) {
  try {
    const stamp = JSON.parse(readFileSync(join(distDir, STAMP_FILE), "utf8"));
    return typeof stamp?.fingerprint === "string" && Array.isArray(stamp.files) ? stamp : undefined;
  } catch {
    return undefined;
  }
}

/**
 * @param {string} distDir
 * @param {BuildStamp} stamp
 */
export function writeBuildStamp(distDir, stamp) {
  writeFileSync(join(distDir, STAMP_FILE), `${JSON.stringify(stamp, null, 2)}\n`);
}
