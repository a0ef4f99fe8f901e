/**
 * When the core runs from its TypeScript sources (vitest, the bin's tsx fallback), a workspace
 * plugin must too: its `dist/` may be missing or stale, and the `@modelmux/core` it imports from
 * there would be a second core (another `ModelmuxError` class). Packages opt in with the
 * `modelmux-source` export condition, which a `require.resolve` cannot be asked to use.
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

/** Also in `core/build/workspace-packages.mjs`, which the compiled core does not import. */
const SOURCE_CONDITION = "modelmux-source";

/** `@scope/name/sub` → `["@scope/name", "./sub"]`; `name` → `["name", "."]`. */
function splitSpecifier(specifier: string): [name: string, subpath: string] {
  const parts = specifier.split("/");
  const nameParts = specifier.startsWith("@") ? 2 : 1;
  const subpath = parts.slice(nameParts).join("/");
  return [parts.slice(0, nameParts).join("/"), subpath ? `./${subpath}` : "."];
}

/**
 * The file a bare specifier's package exports under the `modelmux-source` condition, found the
 * way Node finds packages from the file `from`. Undefined when the nearest such package has no
 * `modelmux-source` entry for that subpath, or there is no such package.
 * @example sourceExport("@modelmux/provider-echo", "/repo/config/x.js") // "/repo/plugins/provider-echo/src/index.ts"
 */
export function sourceExport(specifier: string, from: string): string | undefined {
  const [name, subpath] = splitSpecifier(specifier);
  for (const nodeModules of createRequire(from).resolve.paths(name) ?? []) {
    const packageDir = join(nodeModules, name);
    if (!existsSync(join(packageDir, "package.json"))) continue;
    const { exports } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as { exports?: unknown };
    const entry = exports && typeof exports === "object" ? (exports as Record<string, unknown>)[subpath] : undefined;
    const source = entry && typeof entry === "object" ? (entry as Record<string, unknown>)[SOURCE_CONDITION] : undefined;
    return typeof source === "string" ? realpathSync(join(packageDir, source)) : undefined;
  }
  return undefined;
}
