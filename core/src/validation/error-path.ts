/**
 * Paths in the envelope's `param` form (docs/interface.md, "Request bodies"): array indices in
 * brackets, object keys dotted — `messages[0].content[1].image_url.url`, `logit_bias.50256`,
 * `providers.openai.base_url`.
 */

// Keys that read unambiguously after a dot; anything else (a space, a dot, a bracket) is quoted.
const PLAIN_KEY = /^[\w$-]+$/;

/**
 * Joins two paths of the contract form. Either may be empty; the second may start with a bracket.
 * @example joinPath("providers.openai", "models[0]") // "providers.openai.models[0]"
 */
export function joinPath(base: string | undefined, path: string): string {
  if (!base) return path;
  if (!path) return base;
  return path.startsWith("[") ? `${base}${path}` : `${base}.${path}`;
}

/** Appends an object key: `metadata` + `my_key` → `metadata.my_key`; odd keys become `metadata["a b"]`. */
export function appendKey(path: string, key: string): string {
  return joinPath(path, PLAIN_KEY.test(key) ? key : `[${JSON.stringify(key)}]`);
}

/**
 * Converts an Ajv `instancePath` (a JSON Pointer such as `/messages/0/role`) into the contract form.
 * A pointer does not say whether `0` indexes an array or names a key, so the validated value is
 * walked when it is given; without it, digit segments are taken for array indices.
 */
export function pathFromPointer(pointer: string, data?: unknown): string {
  if (!pointer) return "";
  let path = "";
  let node: unknown = data;
  for (const raw of pointer.slice(1).split("/")) {
    const segment = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    const isIndex = data === undefined ? /^\d+$/.test(segment) : Array.isArray(node);
    path = isIndex ? `${path}[${segment}]` : appendKey(path, segment);
    node = node !== null && typeof node === "object" ? (node as Record<string, unknown>)[segment] : undefined;
  }
  return path;
}
