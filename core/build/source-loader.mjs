// @ts-check
/**
 * The bin's fallback when `dist/` cannot be built: run the TypeScript sources through tsx, as
 * modelmux did before it had a `dist/`. Costs a loader thread and esbuild in the process.
 */
import { register } from "node:module";

/**
 * Registers tsx, and a resolve hook that adds the `modelmux-source` export condition so that
 * `@modelmux/*` packages resolve to their `src/` instead of a `dist/` that is missing or stale.
 */
export async function registerSourceLoader() {
  const { register: registerTsx } = await import("tsx/esm/api");
  registerTsx();
  // Registered last, so it runs first and hands the condition on to tsx's resolver.
  register("./source-condition-hooks.mjs", import.meta.url);
}
