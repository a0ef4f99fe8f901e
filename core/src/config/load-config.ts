/**
 * Reads a config file: YAML, then `${VAR}` substitution, then the JSON Schema of
 * `config/modelmux.schema.json`. Every error names the offending path.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { ErrorObject } from "ajv";
import { parseDocument } from "yaml";
import { CORE_PACKAGE_DIR } from "../package-dir.ts";
import { createAjv, formatAjvError } from "../validation/ajv.ts";
import { distinctProblems } from "../validation/error-list.ts";
import { ConfigError } from "./config-error.ts";
import { interpolateEnv, MissingEnvError } from "./interpolate-env.ts";
import type { ModelmuxConfig } from "./types.ts";

/**
 * Where the config's JSON Schema and the built-in default config are: in a checkout, the
 * repository's `config/` (their one source); in an installed core, the copy its `prepack` put in
 * the package's own `config/` (`core/build/copy-config.mjs`).
 */
export const CONFIG_DIR = configDir();

function configDir(): string {
  const repository = resolve(CORE_PACKAGE_DIR, "..", "config");
  const inCheckout = existsSync(resolve(CORE_PACKAGE_DIR, "src")) && existsSync(resolve(repository, "modelmux.schema.json"));
  return inCheckout ? repository : resolve(CORE_PACKAGE_DIR, "config");
}

export const SCHEMA_PATH = resolve(CONFIG_DIR, "modelmux.schema.json");
export const DEFAULT_CONFIG_PATH = resolve(CONFIG_DIR, "modelmux.yaml");

let schemaValidator: ReturnType<ReturnType<typeof createAjv>["compile"]> | undefined;

function configValidator() {
  if (!schemaValidator) {
    const schema = JSON.parse(readFileSync(SCHEMA_PATH, "utf8")) as Record<string, unknown>;
    // Values that came from `${VAR}` are strings; coercing by the schema turns `"8080"` into the
    // integer a `port` needs while a digit-only API key stays a string. Config only, never bodies.
    // `allErrors`: `modelmux check` reports every problem of a file at once (a config is trusted
    // and read once). `verbose` gives each error its schema, whose keys "did you mean" reads.
    schemaValidator = createAjv({ coerceTypes: true, allErrors: true, verbose: true }).compile(schema);
  }
  return schemaValidator;
}

/**
 * Rules reported whole. A unit (`definitions.duration`, `definitions.size`) is an `anyOf` of a
 * number and a string, so Ajv's first error is one branch's (`must be an integer` for `30 days`);
 * a pool member's weight, `server.cors.origins` and a header name are better told with what they
 * mean than as `must be > 0`, `must be equal to constant` or a pattern.
 */
const UNIT_RULES: ReadonlyArray<readonly [schemaPath: string, rule: string]> = [
  ["#/definitions/duration/", "must be a duration: a number of seconds or a string like 60s, 5m, 12h, 30d (units ms, s, m, h, d)"],
  ["#/definitions/size/", "must be a size: a number of bytes or a string like 512kb, 10mb, 1gb (units b, kb, mb, gb)"],
  ["#/definitions/pool_member/properties/weight/", "must be a number more than 0 (the member's share of the pool's requests, e.g. 1); remove a member that should get none"],
  ["#/properties/server/properties/cors/properties/origins/then/", 'must be "*" (every origin) or a list of origins, e.g. [https://app.example.com]'],
  ["#/properties/server/properties/cors/properties/headers/items/", "must be a header name, e.g. x-my-header"],
];

function configErrorMessage(error: ErrorObject, config: unknown): { message: string; param: string | null } {
  const { message, param } = formatAjvError(error, undefined, config);
  const unit = UNIT_RULES.find(([schemaPath]) => error.schemaPath.startsWith(schemaPath));
  return { message: unit && param ? `${param}: ${unit[1]}` : message, param };
}

/**
 * Checks a config object (after substitution) against the schema and returns it typed.
 * @throws ConfigError naming the path of every problem, e.g. `providers.openai.models: must have at least 1 item`
 */
export function validateConfig(config: unknown): ModelmuxConfig {
  const validate = configValidator();
  if (!validate(config)) {
    const problems = distinctProblems(validate.errors ?? [], (error) => configErrorMessage(error, config));
    throw new ConfigError(problems.length > 0 ? problems : ["invalid config"]);
  }
  return config as ModelmuxConfig;
}

/** Substitutes the environment into a parsed config and validates it. */
export function prepareConfig(raw: unknown, env: NodeJS.ProcessEnv = process.env): ModelmuxConfig {
  const missing: MissingEnvError[] = [];
  const substituted = interpolateEnv(raw, env, "", missing);
  if (missing.length > 0) throw new ConfigError(missing.map((error) => error.message));
  return validateConfig(substituted);
}

export interface ConfigFile {
  /** The parsed YAML, before `${VAR}` substitution: `createRouter` substitutes it, exactly once. */
  raw: ModelmuxConfig;
  /** Absolute path of the file that was read. */
  path: string;
  /** Where `./` plugin paths are resolved from. */
  baseDir: string;
}

export interface LoadedConfigFile extends Omit<ConfigFile, "raw"> {
  config: ModelmuxConfig;
}

/** Reads and parses a YAML config file, without substituting or validating it. */
export function readConfigFile(file: string): ConfigFile {
  const path = resolve(file);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(`cannot read config file ${path}${code ? ` (${code})` : ""}`, { cause: error });
  }
  const document = parseDocument(text, { prettyErrors: true });
  if (document.errors.length > 0) {
    throw new ConfigError(document.errors.map((error) => `${path}: invalid YAML: ${error.message}`));
  }
  const raw: unknown = document.toJS();
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new ConfigError(`${path}: the config must be a YAML mapping`);
  }
  return { raw: raw as ModelmuxConfig, path, baseDir: dirname(path) };
}

/** Prefixes each problem of a config error with the file it came from. */
export function inConfigFile(path: string, error: unknown): unknown {
  return error instanceof ConfigError ? new ConfigError(error.problems.map((problem) => `${path}: ${problem}`), { cause: error }) : error;
}

/** Reads, substitutes and validates a YAML config file. */
export function loadConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): LoadedConfigFile {
  const { raw, path, baseDir } = readConfigFile(file);
  try {
    return { config: prepareConfig(raw, env), path, baseDir };
  } catch (error) {
    throw inConfigFile(path, error);
  }
}
