/**
 * `cors(options)`: lets pages of the configured web origins call the router from a browser
 * (`server.cors`, docs/interface.md, "CORS"). A preflight (`OPTIONS` with `Origin` and
 * `Access-Control-Request-Method`) is answered here, before `auth`: a browser sends it without the
 * `Authorization` header it asks permission for. Every other reply to an allowed origin (JSON, a
 * stream, an error, a 401) carries `access-control-allow-origin` and the headers its page may read,
 * through `x.replyHeaders`. The router leaves it out of the chain when `server.cors` is unset.
 */
import type { Middleware } from "h3";
import { originNotAllowed } from "../../errors.ts";
import { exchangeOf } from "../event-exchange.ts";
import { bytesReply } from "../reply.ts";

export interface CorsOptions {
  /** The origins allowed, as browsers send them (`https://app.example.com`), or `"*"` for any. */
  origins: readonly string[] | "*";
  /** Request headers allowed besides {@link CORS_ALLOWED_HEADERS}, lower case. */
  headers?: readonly string[];
  /** How long a browser may keep a preflight's answer, in seconds. Default 7200 (Chrome's most). */
  maxAge?: number;
}

/**
 * The request headers every preflight allows: the credential, the JSON body's type, a client's own
 * request id, and what the openai SDK sends (`openai-*`; its `x-stainless-*` headers are allowed by
 * prefix, as a newer SDK may add one). `accept` needs no permission.
 */
export const CORS_ALLOWED_HEADERS: readonly string[] = [
  "authorization",
  "content-type",
  "x-request-id",
  "user-agent",
  "openai-organization",
  "openai-project",
  "openai-beta",
];

/** The SDK's own headers (`x-stainless-os`, `-retry-count`, `-timeout`…): allowed whatever their suffix. */
const SDK_HEADER_PREFIX = "x-stainless-";

/** Every header of the router's replies a page may want to read. */
export const CORS_EXPOSED_HEADERS: readonly string[] = [
  "x-request-id",
  "x-ratelimit-limit-requests",
  "x-ratelimit-remaining-requests",
  "x-ratelimit-reset-requests",
  "x-ratelimit-limit-tokens",
  "x-ratelimit-remaining-tokens",
  "x-ratelimit-reset-tokens",
  "x-ratelimit-limit-cost",
  "x-ratelimit-remaining-cost",
  "x-ratelimit-reset-cost",
  "x-modelmux-model",
  "x-modelmux-attempts",
  "retry-after",
  "retry-after-ms",
];

const ALLOWED_METHODS = "GET, HEAD, POST, DELETE";

/**
 * @example createRouter(config, { middleware: (m) => m.map((f) => (f.name === "cors" ? cors({ origins: ["https://app.example.com"], maxAge: 600 }) : f)) })
 */
export function cors(options: CorsOptions): Middleware {
  const { origins, headers = [], maxAge = 7200 } = options;
  const any = origins === "*";
  const allowed = new Set(any ? [] : origins);
  const expose = CORS_EXPOSED_HEADERS.join(", ");
  // What the replies carry, made once: `*` is the same for every origin; a listed origin's vary by it.
  const anyOrigin = Object.freeze({ "access-control-allow-origin": "*", "access-control-expose-headers": expose });
  const byOrigin = new Map([...allowed].map((origin) => [origin, Object.freeze({ "access-control-allow-origin": origin, "access-control-expose-headers": expose, vary: "origin" })]));
  const varyOnly = Object.freeze({ vary: "origin" });
  const allowHeaders = new Set([...CORS_ALLOWED_HEADERS, ...headers]);

  /** The allowed headers, and the SDK's among those the preflight asks for. */
  function allowHeadersFor(requested: string | undefined): string {
    const names = new Set(allowHeaders);
    for (const name of requested?.split(",") ?? []) {
      const header = name.trim().toLowerCase();
      if (header.startsWith(SDK_HEADER_PREFIX) && /^[\w-]+$/.test(header)) names.add(header);
    }
    return [...names].join(", ");
  }

  return function cors(event, next) {
    const x = exchangeOf(event);
    const origin = x.header("origin");
    const own = any ? anyOrigin : origin === undefined ? varyOnly : (byOrigin.get(origin) ?? varyOnly);
    if (x.method === "OPTIONS" && origin !== undefined && x.header("access-control-request-method") !== undefined) {
      // A refusal without the allow headers fails the browser's check whatever its status; 403 says why.
      if (own === varyOnly) {
        x.replyHeaders = varyOnly;
        throw originNotAllowed(origin);
      }
      return bytesReply(
        null,
        {
          "access-control-allow-origin": any ? "*" : origin,
          "access-control-allow-methods": ALLOWED_METHODS,
          "access-control-allow-headers": allowHeadersFor(x.header("access-control-request-headers")),
          "access-control-max-age": String(maxAge),
          vary: any ? "access-control-request-headers" : "origin, access-control-request-headers",
        },
        204,
      );
    }
    x.replyHeaders = own;
    return next();
  };
}
