/**
 * The config as written (README, "Configuration") and as resolved once at start-up.
 */
import type { Capabilities } from "../capabilities.ts";

export type Duration = number | string;
export type Size = number | string;

/**
 * A rate limit (README, "Rate limits"): at most `requests` requests, `tokens` tokens and `cost` USD
 * in any `window`; at least one of the three.
 */
export interface LimitConfig {
  requests?: number;
  tokens?: number;
  /** A budget: USD spent in any `window` (README, "Budgets"). */
  cost?: number;
  window: Duration;
}

/**
 * `auth.jwt` (README, "Identity-provider tokens"): identity-provider tokens, verified against the
 * provider's JWKS.
 */
export interface JwtConfig {
  issuer: string;
  /** One audience, or several: the token's `aud` must name one of them. */
  audience: string | string[];
  jwks_url: string;
  /** The claim that names the app. Default `azp`. */
  app_claim?: string;
  /** The claim that names the developer. Default `sub`. */
  developer_claim?: string;
  /** Signature algorithms accepted. Default: any asymmetric one the JWKS key allows. */
  algorithms?: string[];
  /** Leeway for `exp` and `nbf`. Default 5s. */
  clock_tolerance?: Duration;
  /** How long one JWKS fetch may take. Default 5s. */
  jwks_timeout?: Duration;
  /** After a fetch, how long a token with an unknown `kid` waits before it may cause another. Default 30s. */
  jwks_cooldown?: Duration;
  /** Keys older than this are fetched again. Default 10m. */
  jwks_cache_max_age?: Duration;
}

/**
 * `rate_limit` (README, "Rate limits"): the limiter plugin, the limits per app and per developer,
 * and overrides.
 */
export interface RateLimitConfig extends Partial<PluginBlock> {
  app?: LimitConfig;
  developer?: LimitConfig;
  /** Per-app overrides of `app`; `false`: that app is not limited. */
  apps?: Record<string, LimitConfig | false>;
  /** Per-developer overrides of `developer`; `false`: that developer is not limited. */
  developers?: Record<string, LimitConfig | false>;
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
  /** The key may use the admin endpoints (docs/interface.md, "Authentication"). Default false. */
  admin?: boolean;
}

/** `routing.retry` (README, "Routing and resilience"): retries of one target. */
export interface RetryConfig {
  /** Extra tries of the same target after its first (0 = none). Default 2. */
  attempts?: number;
  /** The first wait; doubles each retry, full jitter. Default 250ms. */
  backoff?: Duration;
  /** Default 8s. */
  max_backoff?: Duration;
  /** A provider's Retry-After up to this is waited; a longer one moves on to the next target. Default 30s. */
  max_retry_after?: Duration;
}

/** `routing.timeouts`: limits of one attempt; 0 is no limit. */
export interface TimeoutsConfig {
  /** Default 5s. */
  connect?: Duration;
  /** Streams: the wait for the first content. Default 30s. */
  first_token?: Duration;
  /** Streams: the longest silence between events. Default 30s. */
  idle?: Duration;
}

/** `routing.circuit_breaker`. */
export interface CircuitBreakerConfig {
  /** Consecutive retryable failures of one target that open its circuit. Default 5. */
  failures?: number;
  /** How long a circuit stays open before one probe goes through. Default 10s. */
  cooldown?: Duration;
}

/** `routing`: the defaults of every provider, which a provider block may override. */
export interface RoutingConfig {
  retry?: RetryConfig;
  timeouts?: TimeoutsConfig;
  circuit_breaker?: CircuitBreakerConfig;
}

/** A weighted pool behind one alias: one member is picked per request by weight, the others are its fallbacks. */
export interface PoolAliasConfig {
  loadbalance: Array<{ model: string; weight?: number }>;
}

/** An alias: a `provider/model`, or a weighted pool of them. */
export type AliasConfig = string | PoolAliasConfig;

export interface ProviderConfig {
  plugin: string;
  models: Array<string | { id: string; capabilities?: Partial<Capabilities> }>;
  capabilities?: Partial<Capabilities>;
  rate_limit?: LimitConfig;
  /** The whole wait for a JSON reply or a stream's first event, then the longest silence in a stream. 0 is no limit. Default 600s. */
  timeout?: Duration;
  requires_env?: string[];
  /** Overrides `routing.retry` for this provider's models (only the keys given). */
  retry?: RetryConfig;
  /** Overrides `routing.timeouts` for this provider's models (only the keys given). */
  timeouts?: TimeoutsConfig;
  /** Overrides `routing.circuit_breaker` for this provider's models (only the keys given). */
  circuit_breaker?: CircuitBreakerConfig;
  /** Everything else is the plugin's own options (`base_url`, `api_key`, …). */
  [option: string]: unknown;
}

/** `server.cors`: which web origins' pages may call the router from a browser. */
export interface CorsConfig {
  /** Origins as browsers send them (`https://app.example.com`), or `"*"` for any. */
  origins: string[] | "*";
  /** Request headers allowed besides the defaults (authorization, content-type, the openai SDK's). */
  headers?: string[];
  /** How long a browser may keep a preflight's answer. Default 2h. */
  max_age?: Duration;
}

/** A config object as `createRouter` takes it: the YAML file's content after `${VAR}` substitution. */
export interface ModelmuxConfig {
  server?: {
    host?: string;
    port?: number;
    body_limit?: Size;
    shutdown_timeout?: Duration;
    request_timeout?: Duration;
    /** The longest a reply may wait for its client to take more of it; then the connection is closed. 0 is no limit. Default 60s. */
    write_timeout?: Duration;
    max_connections?: number;
    public_url?: string;
    trusted_proxies?: string[];
    /** The most read of one upstream reply: a JSON or error body, one SSE event, in bytes (at least 1); the most kept of a stored stream's answer (characters). Default 64mb. */
    upstream_body_limit?: Size;
    /** Cross-origin requests from browsers (README, "CORS"). Unset: no CORS headers. */
    cors?: CorsConfig;
  };
  logging?: { level?: "silent" | "error" | "warn" | "info" | "debug"; format?: "pretty" | "json" };
  auth?: {
    api_keys: ApiKeyConfig[];
    jwt?: JwtConfig;
  };
  storage?: PluginBlock & { ttl?: Duration; timeout?: Duration };
  rate_limit?: RateLimitConfig;
  providers: Record<string, ProviderConfig>;
  routing?: RoutingConfig;
  /** Per model (`provider/model` or a plain alias): the models tried in order when it fails with a retryable error. */
  fallbacks?: Record<string, string[]>;
  /** Per `provider/model`: USD per million input, cached input and output tokens (README, "Pricing"). */
  pricing?: Record<string, { input: number; cached_input?: number; output: number }>;
  aliases?: Record<string, AliasConfig>;
  responses?: { provider: string };
}

/** The core's keys of a provider block; the rest goes to the plugin. */
export const PROVIDER_CORE_KEYS = [
  "plugin",
  "models",
  "capabilities",
  "rate_limit",
  "timeout",
  "requires_env",
  "retry",
  "timeouts",
  "circuit_breaker",
] as const;
