// @ts-check
/**
 * The packages `dist/` is built for: the core and every `plugins/*` package of the checkout. A
 * package's compiled entry points are read from its `exports`: each entry with a `modelmux-source`
 * condition (the TypeScript file) and a `default` (the JavaScript file under `dist/`) is built. Its
 * `types` (declarations, made when the package is packed) mirror `src/` under `dist/types/`.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The export condition that selects a package's TypeScript sources instead of its `dist/`. */
export const SOURCE_CONDITION = "modelmux-source";

/** The `core/` folder (this file is `core/build/workspace-packages.mjs`). */
export const CORE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * Folders whose files decide whether `dist/` is fresh: the core, then each `plugins/*` package
 * that has a `package.json`. Only directory listings: this runs on every start of the bin.
 * @returns {string[]} absolute folders
 */
export function packageDirs(coreDir = CORE_DIR) {
  const pluginsDir = join(coreDir, "..", "plugins");
  const plugins = existsSync(pluginsDir)
    ? readdirSync(pluginsDir, { withFileTypes: true })
        .filter((entry) => entry.isDirectory() && existsSync(join(pluginsDir, entry.name, "package.json")))
        .map((entry) => join(pluginsDir, entry.name))
        .sort()
    : [];
  return [coreDir, ...plugins];
}

/** Where a pack build writes the declarations of `src/`, relative to `dist/`. */
export const TYPES_DIR = "types";

/**
 * @typedef {object} PackageBuild
 * @property {string} dir the package folder
 * @property {string} name the package name
 * @property {{ in: string, out: string }[]} entryPoints esbuild entry points, `out` relative to `dist/`
 */

/**
 * The `types` an export entry must name: its source's declarations, where a pack build writes them.
 * @param {string} dir the package folder
 * @param {string} source the entry's absolute `.ts` source, under `src/`
 * @example typesPath("/repo/core", "/repo/core/src/testing/index.ts") // "./dist/types/testing/index.d.ts"
 */
export function typesPath(dir, source) {
  const fromSrc = relative(join(dir, "src"), source).split("\\").join("/");
  return `./dist/${TYPES_DIR}/${fromSrc.replace(/\.ts$/, ".d.ts")}`;
}

/**
 * Reads the entry points to compile from a package's `exports`.
 * @param {string} dir
 * @returns {PackageBuild}
 */
export function packageBuild(dir) {
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  /** @type {{ in: string, out: string }[]} */
  const entryPoints = [];
  const exportsField = pkg.exports && typeof pkg.exports === "object" ? pkg.exports : {};
  for (const [subpath, target] of Object.entries(exportsField)) {
    if (!target || typeof target !== "object" || !target[SOURCE_CONDITION]) continue;
    const source = resolve(dir, target[SOURCE_CONDITION]);
    const compiled = resolve(dir, String(target.default ?? ""));
    const fromDist = relative(join(dir, "dist"), compiled);
    if (!compiled.endsWith(".js") || fromDist.startsWith("..") || isAbsolute(fromDist)) {
      throw new Error(`${pkg.name}: exports["${subpath}"].default must be a .js file under ./dist/ next to "${SOURCE_CONDITION}"`);
    }
    if (target.types !== undefined && target.types !== typesPath(dir, source)) {
      throw new Error(`${pkg.name}: exports["${subpath}"].types must be "${typesPath(dir, source)}", the declarations of "${target[SOURCE_CONDITION]}"`);
    }
    entryPoints.push({ in: source, out: fromDist.slice(0, -".js".length) });
  }
  return { dir, name: pkg.name, entryPoints };
}
