/**
 * Small resolvers that turn the validated config into what the router runs with: defaults filled,
 * units parsed, keys made, cross-references (aliases, responses.provider) checked.
 */
import { randomBytes } from "node:crypto";
import type { ApiKeyEntry } from "../server/auth/authenticate.ts";
import { DEFAULT_UPSTREAM_BODY_LIMIT } from "../upstream/body-limit.ts";
import { ConfigError, ConfigProblems } from "./config-error.ts";
import type { ModelmuxConfig } from "./types.ts";
import { parseSize, parseTimer } from "./units.ts";

export interface ServerSettings {
  host: string;
  port: number;
  bodyLimit: number;
  shutdownTimeoutMs: number;
  /** Time to receive a request's headers and body; 0 is no limit. */
  requestTimeoutMs: number;
  /** The longest a reply's write may wait for the client to take more of it; 0 is no limit. */
  writeTimeoutMs: number;
  maxConnections: number;
  /** `server.upstream_body_limit` in bytes. */
  upstreamBodyLimit: number;
}

export function resolveServer(config: ModelmuxConfig): ServerSettings {
  const server = config.server ?? {};
  const problems = new ConfigProblems();
  const settings = {
    host: server.host ?? "127.0.0.1",
    port: server.port ?? 8080,
    bodyLimit: parseSize(server.body_limit ?? "10mb"),
    shutdownTimeoutMs: problems.check(() => parseTimer(server.shutdown_timeout ?? "10s", "server.shutdown_timeout")),
    // Enough for a 10mb body (the default body_limit) on a 1.5 Mbit/s uplink; a prompt takes milliseconds.
    requestTimeoutMs: problems.check(() => parseTimer(server.request_timeout ?? "60s", "server.request_timeout")),
    // A client that takes not even 64 KB of its reply in a minute (about 1 KB/s) is gone or stalling on purpose.
    writeTimeoutMs: problems.check(() => parseTimer(server.write_timeout ?? "60s", "server.write_timeout")),
    // Room for a thousand long streams and the load beside them, below common open-file limits.
    maxConnections: server.max_connections ?? 4096,
    upstreamBodyLimit: problems.check(() => (server.upstream_body_limit === undefined ? DEFAULT_UPSTREAM_BODY_LIMIT : upstreamBodyLimit(server.upstream_body_limit))),
  };
  problems.throwIfAny();
  return settings as ServerSettings;
}

/** `server.upstream_body_limit` in bytes: a limit of 0 would refuse every reply, and no limit is what it exists to prevent. */
function upstreamBodyLimit(value: number | string): number {
  const bytes = parseSize(value);
  if (bytes < 1) throw new ConfigError("server.upstream_body_limit: must be at least 1 byte, e.g. 64mb (the default); 0 would refuse every upstream reply");
  return bytes;
}

export interface ResolvedKeys {
  keys: ApiKeyEntry[];
  /** Keys made at start because the configured one was empty; shown once to the operator. */
  generated: ApiKeyEntry[];
}

/** A key made at start: 32 random bytes, in the `sk-` form clients expect. */
function generateKey(): string {
  return `sk-modelmux-${randomBytes(24).toString("base64url")}`;
}

export function resolveApiKeys(config: ModelmuxConfig): ResolvedKeys {
  if (!config.auth) throw new ConfigError("auth: is required (auth.api_keys lists the keys clients send as 'Authorization: Bearer <key>')");
  const keys: ApiKeyEntry[] = [];
  const generated: ApiKeyEntry[] = [];
  const problems = new ConfigProblems();
  config.auth.api_keys.forEach((entry, i) => {
    const scope = { app: entry.app ?? "default", developer: entry.developer ?? "default", admin: entry.admin === true };
    if (entry.key !== "") return keys.push({ key: entry.key, ...scope });
    if (!entry.generate_if_empty) {
      return problems.add(`auth.api_keys[${i}].key: must not be empty (set the variable it names, or add generate_if_empty: true)`);
    }
    const made = { key: generateKey(), ...scope };
    keys.push(made);
    generated.push(made);
  });
  problems.throwIfAny();
  return { keys, generated };
}

/**
 * Keeps plain aliases whose target is a served model. Every alias must name a model the config
 * lists; one whose provider is off (`requires_env`) is dropped and returned in `dropped`. Pool
 * aliases (`loadbalance`) are resolved with the routing config (`resolve-routing.ts`).
 */
export function resolveAliases(config: ModelmuxConfig, servedProviders: ReadonlySet<string>) {
  const configured = new Set(
    Object.entries(config.providers).flatMap(([name, block]) => block.models.map((m) => `${name}/${typeof m === "string" ? m : m.id}`)),
  );
  const aliases: Record<string, string> = {};
  const dropped: string[] = [];
  const problems = new ConfigProblems();
  for (const [alias, target] of Object.entries(config.aliases ?? {})) {
    if (typeof target !== "string") continue;
    if (!configured.has(target)) {
      problems.add(`aliases.${alias}: '${target}' is not a configured model (name one of providers.<name>.models as 'provider/model')`);
    } else if (servedProviders.has(target.slice(0, target.indexOf("/")))) aliases[alias] = target;
    else dropped.push(alias);
  }
  problems.throwIfAny();
  return { aliases, dropped };
}
