/**
 * The core package's folder, the same whether this code runs from `src/` or bundled into `dist/`
 * (or `dist/chunks/`): paths counted up from `import.meta.url` differ between the two.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

function nearestPackageDir(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) throw new Error(`[modelmux] no package.json above ${from}`);
  }
}

/** The folder of `@modelmux/core` (its `package.json`, `src/`, `dist/`). */
export const CORE_PACKAGE_DIR = nearestPackageDir(dirname(fileURLToPath(import.meta.url)));
