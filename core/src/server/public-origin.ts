/**
 * The origin of the URLs a reply gives that point back at the router (generated image files,
 * README "Images"). `server.public_url` when it is set, whatever the request says. Otherwise the
 * request's own origin (`Exchange.origin`: its Host header only when that is a plain host[:port]),
 * and `X-Forwarded-Proto` / `X-Forwarded-Host` only when the connection comes from an address in
 * `server.trusted_proxies`: anyone else could name any host or scheme with them.
 */
import { isIPv6, type BlockList } from "node:net";
import type { Exchange } from "./exchange.ts";

/** How the router's public origin is found: `server.public_url` and `server.trusted_proxies`. */
export interface OriginPolicy {
  /** `server.public_url` without a trailing slash (it may carry a path prefix): used as is. */
  publicUrl?: string;
  /** The peers whose `X-Forwarded-Proto` and `X-Forwarded-Host` are believed. */
  trustedProxies?: BlockList;
}

/**
 * A host the way a URL's authority may carry it (RFC 3986): a name or IPv4 address of letters,
 * digits, `-`, `.`, `_`, `~`, or an IPv6 address in brackets, with an optional port. Nothing else:
 * no path, query, userinfo, space or percent sign can reach a URL through it.
 */
const HOST = /^(?:[A-Za-z0-9._~-]{1,253}|\[([0-9A-Fa-f:.]{2,45})\])(?::(\d{1,5}))?$/;

/**
 * True when a Host (or X-Forwarded-Host) value is a plain `host[:port]`.
 * @example isValidHost("api.example.com:8443") // true
 * @example isValidHost("evil.example/phish?x=") // false
 */
export function isValidHost(value: string): boolean {
  const match = HOST.exec(value);
  if (!match) return false;
  if (match[1] !== undefined && !isIPv6(match[1])) return false;
  return match[2] === undefined || Number(match[2]) <= 65_535;
}

/** The last of a comma-separated header's values: the one the nearest proxy, the trusted one, set. */
function lastValue(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const comma = header.lastIndexOf(",");
  const value = (comma < 0 ? header : header.slice(comma + 1)).trim();
  return value === "" ? undefined : value;
}

function isTrusted(proxies: BlockList, address: string): boolean {
  // BlockList matches an IPv4 rule against the IPv4-mapped form (`::ffff:10.0.0.1`) a dual-stack socket reports.
  return proxies.check(address, isIPv6(address) ? "ipv6" : "ipv4");
}

/**
 * The origin (`scheme://host[:port]`, or `server.public_url` with its path prefix) to build URLs
 * on this router with. Computed per call, only by the endpoints that need it.
 * @example `${publicOrigin(x, policy)}/files/images/${name}`
 */
export function publicOrigin(x: Exchange, policy: OriginPolicy): string {
  if (policy.publicUrl !== undefined) return policy.publicUrl;
  const origin = x.origin;
  const proxies = policy.trustedProxies;
  const peer = proxies && x.peerAddress;
  if (!proxies || !peer || !isTrusted(proxies, peer)) return origin;
  const proto = lastValue(x.header("x-forwarded-proto"))?.toLowerCase();
  const host = lastValue(x.header("x-forwarded-host"));
  const separator = origin.indexOf("://");
  const scheme = proto === "http" || proto === "https" ? proto : origin.slice(0, separator);
  const authority = host !== undefined && isValidHost(host) ? host : origin.slice(separator + 3);
  return `${scheme}://${authority}`;
}
