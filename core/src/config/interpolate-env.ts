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

function substitute(value: string, env: NodeJS.ProcessEnv, path: string, missing: MissingEnvError[]): string {
  return value.replace(PATTERN, (match, name: string, fallback: string | undefined) => {
    const set = env[name];
    if (set !== undefined && set !== "") return set;
    if (fallback !== undefined) return fallback;
    missing.push(new MissingEnvError(name, path));
    return match;
  });
}

/**
 * Returns a copy of `value` with every `${…}` in its strings replaced. `path` names each value for
 * errors. A variable that is unset without a default is thrown as a MissingEnvError, or, given
 * `missing`, added to it (every one of them, for `modelmux check`) and left as written.
 */
export function interpolateEnv(value: unknown, env: NodeJS.ProcessEnv, path = "", missing?: MissingEnvError[]): unknown {
  const found = missing ?? [];
  const out = interpolateInto(value, env, path, found);
  if (!missing && found.length > 0) throw found[0];
  return out;
}

function interpolateInto(value: unknown, env: NodeJS.ProcessEnv, path: string, missing: MissingEnvError[]): unknown {
  if (typeof value === "string") return value.includes("${") ? substitute(value, env, path || "(root)", missing) : value;
  if (Array.isArray(value)) return value.map((item, i) => interpolateInto(item, env, `${path}[${i}]`, missing));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = interpolateInto(item, env, path ? `${path}.${key}` : key, missing);
    return out;
  }
  return value;
}
