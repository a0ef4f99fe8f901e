// @ts-check
/**
 * The bin's first step: is `dist/` compiled from the sources as they are now? The check is a stat
 * walk (about 2 ms); esbuild is loaded only when a build is needed.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { readBuildStamp } from "./build-stamp.mjs";
import { sourceFingerprint } from "./source-fingerprint.mjs";
import { CORE_DIR } from "./workspace-packages.mjs";

/**
 * @typedef {object} DistState
 * @property {"fresh" | "built" | "rebuilt"} state `built`: there was no `dist/`; `rebuilt`: the sources changed
 * @property {number} [packages] how many packages were compiled
 * @property {number} [ms] how long the build took
 */

/**
 * Makes sure `dist/` matches the sources, building it (or waiting for another process's build) if
 * not. Throws when it cannot be built: no esbuild, a read-only folder, a syntax error.
 * @returns {Promise<DistState>}
 */
export async function ensureDist(coreDir = CORE_DIR) {
  const stamp = readBuildStamp(join(coreDir, "dist"));
  // An installed package without its sources has only dist/ to run.
  if (!existsSync(join(coreDir, "src"))) return { state: "fresh" };
  if (stamp?.fingerprint === sourceFingerprint(coreDir)) return { state: "fresh" };
  const { buildDist } = await import("./build-dist.mjs");
  const { built, packages, ms } = await buildDist({ coreDir, onlyIfStale: true });
  if (!built) return { state: "fresh" };
  return { state: stamp ? "rebuilt" : "built", packages, ms };
}
