// @ts-check
/**
 * Module hooks (run on the loader thread, see `source-loader.mjs`): every resolution gets the
 * `modelmux-source` condition, which points `@modelmux/*` packages at their TypeScript sources.
 */
import { SOURCE_CONDITION } from "./workspace-packages.mjs";

/** @type {import("node:module").ResolveHook} */
export async function resolve(specifier, context, nextResolve) {
  return nextResolve(specifier, { ...context, conditions: [...context.conditions, SOURCE_CONDITION] });
}
