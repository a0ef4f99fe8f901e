/**
 * Finding the handler of a request: paths without parameters in one map (one lookup on the hot
 * path), the few with `:name` segments tried in order. A known path with another method is a 405
 * naming the allowed ones; an unknown path a 404 (docs/interface.md, "Conventions").
 */
import { invalidRequest, methodNotAllowed, notFound } from "../errors.ts";
import { NO_PARAMS, type Exchange } from "./exchange.ts";
import type { Reply } from "./reply.ts";

export type Handler = (x: Exchange) => Reply | Promise<Reply>;

export type Method = "GET" | "HEAD" | "POST" | "DELETE";

/** One path and its handler per method. */
export interface Route {
  path: string;
  methods: Partial<Record<Method, Handler>>;
}

export interface RouteMatch {
  handler: Handler;
  params: Readonly<Record<string, string>>;
}

/** The order methods are listed in an `allow` header. */
const METHOD_ORDER: readonly Method[] = ["GET", "HEAD", "POST", "DELETE"];

interface CompiledRoute {
  methods: Partial<Record<string, Handler>>;
  allow: string[];
  /** For a path with parameters: its segments, `:name` for a parameter. */
  segments?: string[];
}

function compile(route: Route): CompiledRoute {
  const allow = METHOD_ORDER.filter((method) => route.methods[method]);
  const segments = route.path.includes("/:") ? route.path.split("/") : undefined;
  return { methods: route.methods, allow, ...(segments && { segments }) };
}

function decodeParam(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    throw invalidRequest("The request URL is malformed: its path is not valid percent-encoding.", { code: "invalid_request" });
  }
}

/** The parameters of `path` when it matches `segments`, else undefined. */
function matchSegments(segments: readonly string[], path: string): Record<string, string> | undefined {
  const parts = path.split("/");
  if (parts.length !== segments.length) return undefined;
  let params: Record<string, string> | undefined;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    const part = parts[i]!;
    if (segment.startsWith(":")) {
      if (part === "") return undefined;
      (params ??= {})[segment.slice(1)] = part;
    } else if (segment !== part) return undefined;
  }
  return params ?? {};
}

export interface RouteTable {
  /**
   * The handler for `method` on `path`.
   * @throws 404 for an unknown path, 405 (with `allow`) for a known path and another method,
   *   400 for a parameter that is not valid percent-encoding
   */
  match(method: string, path: string): RouteMatch;
}

/**
 * Builds the table once, at start-up.
 * @example
 * const table = createRouteTable([{ path: "/healthz", methods: { GET: health, HEAD: health } }]);
 * table.match("GET", "/healthz").handler;
 */
export function createRouteTable(routes: readonly Route[]): RouteTable {
  const exact = new Map<string, CompiledRoute>();
  const withParams: CompiledRoute[] = [];
  for (const route of routes) {
    const compiled = compile(route);
    if (compiled.segments) withParams.push(compiled);
    else exact.set(route.path, compiled);
  }
  function found(route: CompiledRoute, method: string, path: string, params?: Record<string, string>): RouteMatch {
    const handler = route.methods[method];
    if (!handler) throw methodNotAllowed(method, path, route.allow);
    if (!params) return { handler, params: NO_PARAMS };
    for (const name in params) params[name] = decodeParam(params[name]!);
    return { handler, params };
  }

  return {
    match(method, path) {
      const route = exact.get(path);
      if (route !== undefined) return found(route, method, path);
      for (const candidate of withParams) {
        const params = matchSegments(candidate.segments!, path);
        if (params) return found(candidate, method, path, params);
      }
      throw notFound(`Unknown route: ${method} ${path}`);
    },
  };
}
