// @ts-check
/**
 * Compiles the TypeScript of the core and of every `plugins/*` package into its `dist/`, so the
 * `modelmux` bin runs plain JavaScript (no loader thread, no esbuild in the process). Run by the
 * root `prepare` script on `npm install` / `npm ci`, and by the bin when the sources changed. With
 * `--pack` (each package's `prepack`, so `npm pack` and `npm publish` ship a fresh `dist/`), it also
 * writes the declarations (`build-types.mjs`) and keeps no chunk of an earlier build.
 *
 * Each package's own files are bundled; every bare import stays external, so `@modelmux/core`
 * imported by a plugin is the one `core/dist/` the bin runs (one `ModelmuxError` class). A package
 * is built into a staging folder that then replaces `dist/` by renames, plugins first and the core
 * (whose stamp says "fresh") last, under a lock: a process that sees a fresh stamp sees a whole build.
 *
 *   node core/build/build-dist.mjs          build now (what `npm run build` does)
 *   node core/build/build-dist.mjs --pack   build for packing, unless the last pack build is fresh
 */
import { randomBytes } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { acquireBuildLock } from "./build-lock.mjs";
import { readBuildStamp, writeBuildStamp } from "./build-stamp.mjs";
import { emitDeclarations } from "./build-types.mjs";
import { sourceFingerprint } from "./source-fingerprint.mjs";
import { CORE_DIR, packageBuild, packageDirs } from "./workspace-packages.mjs";

/** Folders a build writes beside `dist/`; the leftovers of a build killed halfway are removed by the next. */
const SCRATCH_PREFIX = ".dist-";
const LEFTOVER = /^\.dist-(staging|old)-/;

/** @typedef {import("./workspace-packages.mjs").PackageBuild} PackageBuild */

/**
 * @param {string} dir
 * @returns {string[]} the files under `dir`, relative to it, `/`-separated
 */
function listFiles(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split("\\").join("/"));
}

/**
 * The chunks of the previous build are copied into the new one: a server started from it loads
 * them later (a lazy `import("./x.ts")`) by their hashed names, which the new build does not have.
 * Only one generation is kept, so `dist/` does not grow.
 * @param {string} distDir
 * @param {string} stagingDir
 * @param {Set<string>} written
 */
function keepPreviousChunks(distDir, stagingDir, written) {
  for (const file of readBuildStamp(distDir)?.files ?? []) {
    if (!file.startsWith("chunks/") || written.has(file) || !existsSync(join(distDir, file))) continue;
    mkdirSync(dirname(join(stagingDir, file)), { recursive: true });
    copyFileSync(join(distDir, file), join(stagingDir, file));
  }
}

/**
 * @param {typeof import("esbuild")} esbuild
 * @param {PackageBuild} pkg
 * @returns {Promise<string>} the staging folder, with the package's compiled JavaScript
 */
async function stage(esbuild, pkg) {
  for (const name of readdirSync(pkg.dir)) {
    if (LEFTOVER.test(name)) rmSync(join(pkg.dir, name), { recursive: true, force: true });
  }
  const stagingDir = join(pkg.dir, `${SCRATCH_PREFIX}staging-${process.pid}-${randomBytes(4).toString("hex")}`);
  await esbuild.build({
    absWorkingDir: pkg.dir,
    entryPoints: pkg.entryPoints,
    outdir: stagingDir,
    bundle: true,
    packages: "external",
    // Modules shared by two entries (index and cli) or loaded lazily become chunks, never copies.
    splitting: true,
    chunkNames: "chunks/[name]-[hash]",
    format: "esm",
    platform: "node",
    target: "node20",
    sourcemap: "linked",
    logLevel: "silent",
  });
  return stagingDir;
}

/**
 * Records what the staging folder holds; a build for running also carries the chunks of the
 * previous one, a pack build does not (a tarball needs none of them).
 * @param {PackageBuild} pkg
 * @param {string} stagingDir
 * @param {{ fingerprint: string, pack: boolean }} build
 */
function seal(pkg, stagingDir, { fingerprint, pack }) {
  const written = listFiles(stagingDir);
  if (!pack) keepPreviousChunks(join(pkg.dir, "dist"), stagingDir, new Set(written));
  writeBuildStamp(stagingDir, { fingerprint, files: written, pack });
}

/**
 * Replaces `dist/` with the staging folder. Between the two renames `dist/` is briefly missing: a
 * process checking then finds no stamp and waits for the lock, which this build holds.
 * @param {string} stagingDir
 */
function swapIn(stagingDir) {
  const packageDir = dirname(stagingDir);
  const distDir = join(packageDir, "dist");
  const oldDir = join(packageDir, `${SCRATCH_PREFIX}old-${process.pid}-${randomBytes(4).toString("hex")}`);
  try {
    renameSync(distDir, oldDir);
  } catch (error) {
    if (/** @type {NodeJS.ErrnoException} */ (error).code !== "ENOENT") throw error;
  }
  try {
    renameSync(stagingDir, distDir);
  } catch (error) {
    if (existsSync(oldDir)) renameSync(oldDir, distDir);
    throw error;
  }
  rmSync(oldDir, { recursive: true, force: true });
}

/**
 * @typedef {object} BuildResult
 * @property {boolean} built false when `onlyIfStale` found `dist/` fresh once the lock was held
 * @property {number} packages how many packages were compiled
 * @property {number} ms how long it took, waiting for the lock included
 */

/**
 * Builds `dist/` of the core at `coreDir` and of its sibling plugins. Waits while another process
 * builds. esbuild runs as a child process: it is stopped before this returns, so nothing of it
 * stays in a long-running server.
 * @param {{ coreDir?: string, onlyIfStale?: boolean, pack?: boolean }} [options] `onlyIfStale`: skip
 *   the build when, once the lock is held, the stamp matches the sources (another process just
 *   built them; with `pack`, the stamp must be a pack build's); `pack`: a build to be packed, with
 *   the declarations and without the previous build's chunks
 * @returns {Promise<BuildResult>}
 * @example
 * const { built, ms } = await buildDist({ onlyIfStale: true });
 */
export async function buildDist({ coreDir = CORE_DIR, onlyIfStale = false, pack = false } = {}) {
  const startedAt = performance.now();
  const release = await acquireBuildLock(join(coreDir, `${SCRATCH_PREFIX}build.lock`));
  /** @type {string[]} */
  const staged = [];
  try {
    const fingerprint = sourceFingerprint(coreDir);
    const stamp = readBuildStamp(join(coreDir, "dist"));
    if (onlyIfStale && stamp?.fingerprint === fingerprint && (stamp.pack || !pack)) {
      return { built: false, packages: 0, ms: performance.now() - startedAt };
    }
    const packages = packageDirs(coreDir)
      .map(packageBuild)
      .filter((pkg) => pkg.entryPoints.length > 0);
    const esbuild = await import("esbuild");
    try {
      staged.push(...(await Promise.all(packages.map((pkg) => stage(esbuild, pkg)))));
    } finally {
      await esbuild.stop();
    }
    if (pack) await emitDeclarations(join(coreDir, ".."), packages.map((pkg, i) => ({ pkg, stagingDir: /** @type {string} */ (staged[i]) })));
    packages.forEach((pkg, i) => seal(pkg, /** @type {string} */ (staged[i]), { fingerprint, pack }));
    // The core last: its stamp is what other processes read as "dist/ is complete and fresh".
    for (const stagingDir of [...staged].reverse()) swapIn(stagingDir);
    return { built: true, packages: packages.length, ms: performance.now() - startedAt };
  } finally {
    for (const stagingDir of staged) rmSync(stagingDir, { recursive: true, force: true });
    release();
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const pack = process.argv.includes("--pack");
  try {
    // Packing four packages runs four prepacks: the first builds, the others find it fresh.
    const { built, packages, ms } = await buildDist({ pack, onlyIfStale: pack });
    const what = pack ? "dist/ with declarations, for packing," : "dist/";
    process.stdout.write(built ? `[modelmux] built ${what} of ${packages} packages in ${Math.round(ms)} ms\n` : `[modelmux] ${what} is fresh\n`);
  } catch (error) {
    process.stderr.write(`[modelmux] building dist/ failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
