/**
 * The router's routes on its h3 app: each path's handler per method, a 405 naming the allowed
 * methods for a known path with another one, and a 404 for any other path (docs/interface.md,
 * "Conventions"). h3 finds the route; the path is then checked against the route as sent, since
 * h3's matching forgives what the router does not (a trailing slash, a needlessly escaped
 * character), and a route's parameters are percent-decoded here. A request on a route gets its
 * path as `x.route` (the metrics' endpoint label).
 */
import type { H3 } from "h3";
import { invalidRequest, methodNotAllowed, notFound } from "../errors.ts";
import { exchangeOf } from "./event-exchange.ts";
import type { Exchange } from "./exchange.ts";
import type { Reply } from "./reply.ts";
import type { ReplyWriter } from "./write-replies.ts";

export type Handler = (x: Exchange) => Reply | Promise<Reply>;

export type Method = "GET" | "HEAD" | "POST" | "DELETE";

/**
 * One path and its handler per method. `:name` is a parameter segment; a last segment `**:name` is a
 * parameter that takes the rest of the path, one or more segments (a `provider/model` sent as is).
 */
export interface Route {
  path: string;
  methods: Partial<Record<Method, Handler>>;
}

/** The order methods are listed in an `allow` header. */
const METHOD_ORDER: readonly Method[] = ["GET", "HEAD", "POST", "DELETE"];

function decodeParam(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    throw invalidRequest("The request URL is malformed: its path is not valid percent-encoding.", { code: "invalid_request" });
  }
}

/** The decoded parameters of `path` when it matches `segments` exactly, else undefined. */
function matchSegments(segments: readonly string[], path: string): Record<string, string> | undefined {
  const parts = path.split("/");
  const rest = segments.at(-1)!.startsWith("**:");
  if (rest ? parts.length < segments.length : parts.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    if (rest && i === segments.length - 1) {
      const tail = parts.slice(i);
      if (tail.includes("")) return undefined;
      params[segment.slice(3)] = tail.join("/");
    } else if (segment.startsWith(":")) {
      if (parts[i] === "") return undefined;
      params[segment.slice(1)] = parts[i]!;
    } else if (segment !== parts[i]) return undefined;
  }
  for (const name in params) params[name] = decodeParam(params[name]!);
  return params;
}

function unknownRoute(x: Exchange): never {
  // h3 matched a route that the path as sent is not on (a trailing slash): no route's request.
  x.route = undefined;
  throw notFound(`Unknown route: ${x.method} ${x.path}`);
}

/** Whether the exchange's path is `route`'s as sent; sets its parameters when it is. */
function paramsMatcher(path: string): (x: Exchange) => boolean {
  if (!path.includes("/:") && !path.includes("/**:")) return (x) => x.path === path;
  const segments = path.split("/");
  return (x) => {
    const params = matchSegments(segments, x.path);
    if (params === undefined) return false;
    x.params = params;
    return true;
  };
}

/**
 * Adds `routes` to `app`, then the 404 for every other path.
 * @example addRoutes(app, [{ path: "/healthz", methods: { GET: health, HEAD: health } }], writer);
 */
export function addRoutes(app: H3, routes: readonly Route[], writer: ReplyWriter): void {
  for (const route of routes) {
    const matches = paramsMatcher(route.path);
    for (const method of METHOD_ORDER) {
      const handler = route.methods[method];
      if (!handler) continue;
      app.on(method, route.path, function routeHandler(event) {
        const x = exchangeOf(event);
        if (!matches(x)) unknownRoute(x);
        x.route = route.path;
        return writer.respond(x, handler);
      });
    }
    const allow = METHOD_ORDER.filter((method) => route.methods[method]);
    app.all(route.path, function methodNotAllowedHandler(event) {
      const x = exchangeOf(event);
      if (!matches(x)) unknownRoute(x);
      x.route = route.path;
      throw methodNotAllowed(x.method, x.path, allow);
    });
  }
  app.all("/**", function notFoundHandler(event) {
    unknownRoute(exchangeOf(event));
  });
}
