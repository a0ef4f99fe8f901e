/**
 * Resolves a plugin reference from the config (contract §10) and returns its definition:
 * - a built-in short name (`provider-openai`) is the package `@modelmux/provider-openai`: a naming
 *   rule, so no registry needs editing when a plugin is added;
 * - a package name (`@acme/modelmux-groq`) is resolved from the config's folder, then from the core;
 * - a `./path` or `../path` is resolved from the config's folder.
 * The module's default export must be made with `defineProvider` / `defineStorage` / `defineRateLimiter`.
 */
import { createRequire } from "node:module";
import { isAbsolute, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { ConfigError } from "../config/config-error.ts";
import type { PluginDefinition } from "../plugin.ts";

const BUILTIN_SHORT_NAME = /^(provider|storage|ratelimit)-[a-z0-9][a-z0-9-]*$/;
const KIND_NAMES = { provider: "provider", storage: "storage", ratelimit: "rate-limit" } as const;

export type PluginKind = PluginDefinition["kind"];

function specifierFor(reference: string): string {
  return BUILTIN_SHORT_NAME.test(reference) ? `@modelmux/${reference}` : reference;
}

function resolveModule(specifier: string, baseDir: string): string {
  if (specifier.startsWith("./") || specifier.startsWith("../") || isAbsolute(specifier)) {
    return pathToFileURL(resolve(baseDir, specifier)).href;
  }
  const errors: unknown[] = [];
  for (const from of [join(baseDir, "noop.js"), import.meta.filename]) {
    try {
      return pathToFileURL(createRequire(from).resolve(specifier)).href;
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
  try {
    module = (await import(resolveModule(specifier, baseDir))) as { default?: unknown };
  } catch (error) {
    const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw new ConfigError(`${path}: cannot load plugin '${reference}' (${reason})`, { cause: error });
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
