/**
 * `${VAR}` and `${VAR:-default}` substitution (README, "Configuration"), applied to the string
 * values of the parsed YAML, never to its raw text: a value with quotes or newlines cannot break
 * the document.
 */

const PATTERN = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export class MissingEnvError extends Error {
  constructor(readonly variable: string, readonly path: string) {
    super(`${path}: environment variable ${variable} is not set or is empty (write \${${variable}:-default} to give a default)`);
  }
}

function substitute(value: string, env: NodeJS.ProcessEnv, path: string): string {
  return value.replace(PATTERN, (_match, name: string, fallback: string | undefined) => {
    const set = env[name];
    if (set !== undefined && set !== "") return set;
    if (fallback !== undefined) return fallback;
    throw new MissingEnvError(name, path);
  });
}

/** Returns a copy of `value` with every `${…}` in its strings replaced. `path` names each value for errors. */
export function interpolateEnv(value: unknown, env: NodeJS.ProcessEnv, path = ""): unknown {
  if (typeof value === "string") return value.includes("${") ? substitute(value, env, path || "(root)") : value;
  if (Array.isArray(value)) return value.map((item, i) => interpolateEnv(item, env, `${path}[${i}]`));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = interpolateEnv(item, env, path ? `${path}.${key}` : key);
    return out;
  }
  return value;
}
