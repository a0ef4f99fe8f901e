/**
 * The config as written (contract §3) and as resolved once at start-up.
 */
import type { Capabilities } from "../capabilities.ts";

export type Duration = number | string;
export type Size = number | string;

export interface LimitConfig {
  requests: number;
  tokens?: number;
  window: Duration;
}

export interface PluginBlock {
  plugin: string;
  options?: Record<string, unknown>;
}

export interface ApiKeyConfig {
  key: string;
  generate_if_empty?: boolean;
  app?: string;
  developer?: string;
}

export interface ProviderConfig {
  plugin: string;
  models: Array<string | { id: string; capabilities?: Partial<Capabilities> }>;
  capabilities?: Partial<Capabilities>;
  rate_limit?: LimitConfig;
  timeout?: Duration;
  requires_env?: string[];
  /** Everything else is the plugin's own options (`base_url`, `api_key`, …). */
  [option: string]: unknown;
}

/** A config object as `createRouter` takes it: the YAML file's content after `${VAR}` substitution. */
export interface ModelmuxConfig {
  server?: { host?: string; port?: number; body_limit?: Size; shutdown_timeout?: Duration };
  logging?: { level?: "silent" | "error" | "warn" | "info" | "debug"; format?: "pretty" | "json" };
  auth?: {
    api_keys: ApiKeyConfig[];
    jwt?: { issuer: string; audience: string; jwks_url: string; app_claim?: string; developer_claim?: string };
  };
  storage?: PluginBlock & { ttl?: Duration };
  rate_limit?: PluginBlock & { app?: LimitConfig; developer?: LimitConfig };
  providers: Record<string, ProviderConfig>;
  aliases?: Record<string, string>;
  responses?: { provider: string };
}

/** The core's keys of a provider block; the rest goes to the plugin. */
export const PROVIDER_CORE_KEYS = ["plugin", "models", "capabilities", "rate_limit", "timeout", "requires_env"] as const;
