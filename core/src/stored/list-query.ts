/**
 * Query strings of the list endpoints (docs/interface.md, "Stored completions"): `after`, `limit`
 * (default 20, 0 to 100), `order` (`asc` default, or `desc`), and for completions `model` and
 * `metadata[key]=value`. Unknown parameters are refused, naming them, like unknown body fields.
 *
 * A metadata key is whatever sits between `metadata[` and the last `]`, any string an update may
 * store: `""`, `__proto__`, a key with a line break. The pairs go into a null-prototype object, so
 * no key can reach `Object.prototype` (or become one), and the storage sees each as an own key.
 */
import { invalidRequest } from "../errors.ts";

export interface ListQuery {
  after?: string;
  limit: number;
  order: "asc" | "desc";
}

export interface CompletionsQuery extends ListQuery {
  model?: string;
  /** A null-prototype object: read it with `Object.entries`/`Object.hasOwn` only. */
  metadata?: Record<string, string>;
}

// `[^]` and not `.`: a key may hold a line break; `*`: the empty key is a key.
const METADATA_PARAM = /^metadata\[([^]*)\]$/;

function parseCommon(params: URLSearchParams, key: string, value: string, into: ListQuery): boolean {
  if (key === "after") {
    if (value === "") throw invalidRequest("after: must not be empty", { param: "after" });
    into.after = value;
  } else if (key === "limit") {
    if (!/^\d+$/.test(value) || Number(value) > 100) {
      throw invalidRequest(`limit: must be an integer from 0 to 100, got '${value}'`, { param: "limit" });
    }
    into.limit = Number(value);
  } else if (key === "order") {
    if (value !== "asc" && value !== "desc") throw invalidRequest(`order: must be one of asc, desc, got '${value}'`, { param: "order" });
    into.order = value;
  } else return false;
  if (params.getAll(key).length > 1) throw invalidRequest(`${key}: must be given once`, { param: key });
  return true;
}

function unknown(key: string): never {
  throw invalidRequest(`${key}: is not a known query parameter`, { code: "unknown_field", param: key });
}

function addPair(metadata: Record<string, string>, param: string, key: string, value: string): void {
  if (Object.hasOwn(metadata, key)) throw invalidRequest(`${param}: must be given once`, { param });
  metadata[key] = value;
}

/** The messages list's query. */
export function parseListQuery(params: URLSearchParams): ListQuery {
  const query: ListQuery = { limit: 20, order: "asc" };
  for (const [key, value] of params) if (!parseCommon(params, key, value, query)) unknown(key);
  return query;
}

/** The completions list's query. */
export function parseCompletionsQuery(params: URLSearchParams): CompletionsQuery {
  const query: CompletionsQuery = { limit: 20, order: "asc" };
  for (const [key, value] of params) {
    if (parseCommon(params, key, value, query)) continue;
    const pair = METADATA_PARAM.exec(key);
    if (key === "model") query.model = value;
    else if (pair) addPair((query.metadata ??= Object.create(null) as Record<string, string>), key, pair[1]!, value);
    else unknown(key);
  }
  return query;
}
