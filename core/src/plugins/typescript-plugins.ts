/**
 * A plugin written in TypeScript loads with no build step (a `./my-plugin.ts` path, or a package
 * whose exports point at `.ts`): when the core runs compiled (`dist/`), tsx is registered the first
 * time such a plugin is imported. A core that runs from its `.ts` sources is already loaded by
 * something that compiles TypeScript (vitest, the bin's tsx fallback), so nothing is registered.
 * tsx is an optional peer dependency of the core: only a project with a `.ts` plugin installs it.
 */

/** True when this code runs from `src/*.ts` rather than from the compiled `dist/`. */
export const CORE_RUNS_FROM_SOURCE = import.meta.url.endsWith(".ts");

const TYPESCRIPT_FILE = /\.[cm]?tsx?$/;

let registered: Promise<void> | undefined;

/**
 * Registers tsx (once per process, on its loader thread) if `url` is a TypeScript file that this
 * process cannot import yet. Must run before the first import of the plugin: Node remembers a
 * module that failed to load, so importing again after registering would fail the same way.
 */
export function prepareTypeScriptImport(url: string): Promise<void> {
  if (CORE_RUNS_FROM_SOURCE || !TYPESCRIPT_FILE.test(new URL(url).pathname)) return Promise.resolve();
  registered ??= import("tsx/esm/api").then(({ register }) => void register(), explainMissingTsx);
  return registered;
}

function explainMissingTsx(error: unknown): never {
  const missing = (error as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND" && /'tsx'/.test((error as Error).message);
  if (!missing) throw error;
  throw new Error("a TypeScript plugin needs tsx, which is not installed: npm i -D tsx (or compile the plugin to JavaScript)", { cause: error });
}
