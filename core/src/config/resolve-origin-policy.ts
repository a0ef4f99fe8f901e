/**
 * Resolves `server.public_url` and `server.trusted_proxies` into how the router finds its public
 * origin for the URLs it hands out (`server/public-origin.ts`), checked at start.
 */
import { BlockList, isIP } from "node:net";
import type { OriginPolicy } from "../server/public-origin.ts";
import { ConfigError, ConfigProblems } from "./config-error.ts";
import type { ModelmuxConfig } from "./types.ts";

/** `https://llm.example.com/router/` → `https://llm.example.com/router`; a query, fragment or credentials are refused. */
function publicUrl(value: string): string {
  const path = "server.public_url";
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw new ConfigError(`${path}: must be an absolute http(s) URL, e.g. https://llm.example.com or https://example.com/llm`);
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new ConfigError(`${path}: must be an origin with an optional path prefix, without credentials, query or fragment`);
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

/** `127.0.0.1`, `10.0.0.0/8`, `::1`, `fd00::/8` into one list of addresses. */
function trustedProxies(entries: readonly string[], problems: ConfigProblems): BlockList {
  const list = new BlockList();
  entries.forEach((entry, i) => {
    const slash = entry.indexOf("/");
    const address = (slash < 0 ? entry : entry.slice(0, slash)).trim();
    const version = isIP(address);
    const prefix = slash < 0 ? undefined : entry.slice(slash + 1).trim();
    const bits = version === 6 ? 128 : 32;
    if (version === 0 || (prefix !== undefined && !(/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits))) {
      return problems.add(`server.trusted_proxies[${i}]: '${entry}' is not an IP address or a CIDR range (e.g. 127.0.0.1, 10.0.0.0/8, fd00::/8)`);
    }
    const type = version === 6 ? "ipv6" : "ipv4";
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  });
  return list;
}

export function resolveOriginPolicy(config: ModelmuxConfig): OriginPolicy {
  const server = config.server ?? {};
  const policy: OriginPolicy = {};
  const problems = new ConfigProblems();
  if (server.public_url !== undefined) policy.publicUrl = problems.check(() => publicUrl(server.public_url!));
  if (server.trusted_proxies && server.trusted_proxies.length > 0) policy.trustedProxies = trustedProxies(server.trusted_proxies, problems);
  problems.throwIfAny();
  return policy;
}
