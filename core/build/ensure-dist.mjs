// @ts-check
/**
 * The bin's first step in a checkout of the repository (an installed package carries a `dist/` built
 * when it was packed, and neither `src/` nor this folder): is `dist/` compiled from the sources as
 * they are now? The check is a stat walk (about 2 ms); esbuild is loaded only when a build is needed.
 */
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
  if (stamp?.fingerprint === sourceFingerprint(coreDir)) return { state: "fresh" };
  const { buildDist } = await import("./build-dist.mjs");
  const { built, packages, ms } = await buildDist({ coreDir, onlyIfStale: true });
  if (!built) return { state: "fresh" };
  return { state: stamp ? "rebuilt" : "built", packages, ms };
}

/**
 * The CLI module the bin runs in a checkout: `dist/cli.js`, compiled again first if the sources
 * changed (one line on stderr says so); when it cannot be compiled, the sources, through tsx, with
 * the `modelmux-source` condition so that every `@modelmux/*` import is a source too.
 * @returns {Promise<URL>}
 */
export async function checkoutCli() {
  try {
    const { state, packages, ms } = await ensureDist();
    if (state !== "fresh") {
      const why = state === "built" ? "dist/ was missing" : "the sources changed";
      process.stderr.write(`[modelmux] ${why}: compiled ${packages} packages into dist/ in ${Math.round(ms ?? 0)} ms\n`);
    }
    return new URL("../dist/cli.js", import.meta.url);
  } catch (error) {
    const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
    process.stderr.write(`[modelmux] cannot compile dist/ (${reason}): running the TypeScript sources through tsx\n`);
    const { registerSourceLoader } = await import("./source-loader.mjs");
    await registerSourceLoader();
    return new URL("../src/cli.ts", import.meta.url);
  }
}
