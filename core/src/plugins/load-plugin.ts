/**
 * Resolves a plugin reference from the config (docs/plugins.md, "What a plugin is") and returns its
 * definition:
 * - a built-in short name (`provider-openai`) is the package `@modelmux/provider-openai`: a naming
 *   rule, so no registry needs editing when a plugin is added;
 * - a package name (`@acme/modelmux-groq`) is resolved from the config's folder, then from the core;
 * - a `./path` or `../path` is resolved from the config's folder.
 * The module's default export must be made with `defineProvider` / `defineStorage` / `defineRateLimiter`.
 * A plugin in TypeScript needs no build step (`typescript-plugins.ts`).
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { isAbsolute, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ConfigError } from "../config/config-error.ts";
import type { PluginDefinition } from "../plugin.ts";
import { closestName } from "../utils/closest-name.ts";
import { BUILTIN_PLUGINS } from "./builtin-plugins.ts";
import { sourceExport } from "./source-export.ts";
import { CORE_RUNS_FROM_SOURCE, prepareTypeScriptImport } from "./typescript-plugins.ts";

const BUILTIN_SHORT_NAME = /^(provider|storage|ratelimit)-[a-z0-9][a-z0-9-]*$/;
/** A JavaScript entry that imports TypeScript: tsx is registered only for a `.ts` entry. */
const UNKNOWN_EXTENSION_HINT = "; name the plugin's TypeScript entry file itself, or compile the plugin to JavaScript";
const KIND_NAMES = { provider: "provider", storage: "storage", ratelimit: "rate-limit" } as const;

export type PluginKind = PluginDefinition["kind"];

function specifierFor(reference: string): string {
  return BUILTIN_SHORT_NAME.test(reference) ? `@modelmux/${reference}` : reference;
}

function isPath(specifier: string): boolean {
  return specifier.startsWith("./") || specifier.startsWith("../") || isAbsolute(specifier);
}

function isNotFound(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === "MODULE_NOT_FOUND" || code === "ERR_MODULE_NOT_FOUND";
}

function cannotLoad(reference: string, path: string, error: unknown): ConfigError {
  const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
  const hint = (error as NodeJS.ErrnoException).code === "ERR_UNKNOWN_FILE_EXTENSION" ? UNKNOWN_EXTENSION_HINT : "";
  return new ConfigError(`${path}: cannot load plugin '${reference}' (${reason})${hint}`, { cause: error });
}

function listed(names: readonly string[]): string {
  return names.length <= 1 ? (names[0] ?? "") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

/**
 * A plugin name no installed package answers to: what is there instead, the built-in plugins of the
 * kind (the generated `builtin-plugins.ts`), and how a third-party one is named (README, "Plugins").
 */
function unknownPlugin(reference: string, specifier: string, kind: PluginKind, baseDir: string): string {
  const builtins = BUILTIN_PLUGINS[kind];
  const near = closestName(reference, builtins);
  const where = BUILTIN_SHORT_NAME.test(reference) ? "" : `, neither where the config is (${resolve(baseDir)}) nor beside modelmux`;
  return (
    `cannot load plugin '${reference}' (no package ${specifier} is installed${where})${near ? `: did you mean ${near}?` : "."} ` +
    `The built-in ${KIND_NAMES[kind]} plugins are ${listed(builtins)}, each the package @modelmux/<name> (npm install it where it is missing). ` +
    `A third-party plugin is named by its package name (installed where the config is) or by a path from the config's folder ` +
    `(./plugins/my-${kind}.js); see the README, "Plugins"`
  );
}

function resolveModule(specifier: string, baseDir: string): string {
  if (isPath(specifier)) {
    return pathToFileURL(resolve(baseDir, specifier)).href;
  }
  const errors: unknown[] = [];
  for (const from of [join(baseDir, "noop.js"), import.meta.filename]) {
    try {
      const source = CORE_RUNS_FROM_SOURCE ? sourceExport(specifier, from) : undefined;
      return pathToFileURL(source ?? createRequire(from).resolve(specifier)).href;
    } catch (error) {
      errors.push(error);
    }
  }
  throw errors[0];
}

function isPluginDefinition(value: unknown): value is PluginDefinition {
  if (!value || typeof value !== "object") return false;
  const def = value as Partial<PluginDefinition>;
  return (
    (def.kind === "provider" || def.kind === "storage" || def.kind === "ratelimit") &&
    typeof def.name === "string" &&
    typeof def.setup === "function" &&
    typeof def.optionsSchema === "object"
  );
}

/**
 * Imports the plugin named by `reference` and checks it is of the expected kind.
 * @param path where the reference sits in the config, for errors (`providers.groq.plugin`)
 */
export async function loadPlugin<K extends PluginKind>(
  reference: string,
  kind: K,
  path: string,
  baseDir: string,
): Promise<Extract<PluginDefinition, { kind: K }>> {
  const specifier = specifierFor(reference);
  let module: { default?: unknown };
  let url: string;
  try {
    url = resolveModule(specifier, baseDir);
  } catch (error) {
    if (!isPath(specifier) && isNotFound(error)) throw new ConfigError(`${path}: ${unknownPlugin(reference, specifier, kind, baseDir)}`, { cause: error });
    throw cannotLoad(reference, path, error);
  }
  if (isPath(specifier) && !existsSync(fileURLToPath(url))) {
    throw new ConfigError(`${path}: cannot load plugin '${reference}' (no file ${fileURLToPath(url)}: a path is read from the config's folder, ${resolve(baseDir)})`);
  }
  try {
    await prepareTypeScriptImport(url);
    module = (await import(url)) as { default?: unknown };
  } catch (error) {
    throw cannotLoad(reference, path, error);
  }
  const definition = module.default;
  if (!isPluginDefinition(definition)) {
    throw new ConfigError(
      `${path}: '${reference}' is not a modelmux plugin: its default export must be made with defineProvider, defineStorage or defineRateLimiter`,
    );
  }
  if (definition.kind !== kind) {
    throw new ConfigError(`${path}: '${reference}' is a ${KIND_NAMES[definition.kind]} plugin, not a ${KIND_NAMES[kind]} plugin`);
  }
  return definition as Extract<PluginDefinition, { kind: K }>;
}
