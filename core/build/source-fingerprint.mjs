// @ts-check
/**
 * A fingerprint of everything `dist/` is compiled from: the path, size and mtime of each file under
 * the packages' `src/`, their `package.json` files and the build scripts. Comparing it with the
 * one the last build recorded tells the bin, with a stat walk of ~150 files (about 2 ms), whether
 * `dist/` is stale. Unlike "newest mtime", it also sees a deleted file or one copied in with an
 * old mtime.
 */
import { createHash } from "node:crypto";
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { CORE_DIR, packageDirs } from "./workspace-packages.mjs";

/**
 * @param {string} dir
 * @returns {string[]} absolute paths of the files under `dir`, or none when it does not exist
 */
function filesUnder(dir) {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => join(entry.parentPath, entry.name));
  } catch (error) {
    if (/** @type {NodeJS.ErrnoException} */ (error).code === "ENOENT") return [];
    throw error;
  }
}

/**
 * The fingerprint of the sources of the core found at `coreDir` and of its sibling plugins.
 * @returns {string} a hex digest
 */
export function sourceFingerprint(coreDir = CORE_DIR) {
  const root = join(coreDir, "..");
  const files = filesUnder(join(coreDir, "build"));
  for (const dir of packageDirs(coreDir)) files.push(join(dir, "package.json"), ...filesUnder(join(dir, "src")));
  const lines = files.map((file) => {
    const { size, mtimeMs } = statSync(file);
    return `${relative(root, file)}\t${size}\t${mtimeMs}`;
  });
  return createHash("sha256").update(lines.sort().join("\n")).digest("hex");
}
