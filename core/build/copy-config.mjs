// @ts-check
/**
 * Copies the repository's `config/` files the core needs at run time (the config's JSON Schema and
 * the built-in default config) into `core/config/`, so that a packed `@modelmux/core` carries them
 * (`files` in `core/package.json`). The repository's `config/` stays the one source: in a checkout
 * the core reads it there (`core/src/config/load-config.ts`), and `core/config/` is not committed.
 * Run by the core's `prepack`.
 */
import { copyFileSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const CORE_DIR = resolve(fileURLToPath(import.meta.url), "..", "..");
export const CONFIG_FILES = ["modelmux.schema.json", "modelmux.yaml"];

/** Copies the config files from `<repo>/config` to `<core>/config`. */
export function copyConfig(coreDir = CORE_DIR) {
  const target = join(coreDir, "config");
  mkdirSync(target, { recursive: true });
  for (const file of CONFIG_FILES) copyFileSync(join(coreDir, "..", "config", file), join(target, file));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) copyConfig();
