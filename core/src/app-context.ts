/**
 * What the endpoints share: built once by `createRouter`, read on every request.
 */
import type { ConsolaInstance } from "consola";
import type { CheckReadiness } from "./health/readiness.ts";
import type { Authenticate } from "./server/auth/authenticate.ts";
import type { OriginPolicy } from "./server/public-origin.ts";
import type { ImageStore } from "./images/image-store.ts";
import type { ModelTable } from "./models/model-table.ts";
import type { Provider, Storage } from "./plugin.ts";
import type { RouterMetrics } from "./operations/metrics.ts";
import type { ActivityWindow } from "./operations/activity.ts";
import type { Pricing } from "./operations/pricing.ts";
import type { CircuitBreakers } from "./routing/circuit-breaker.ts";
import type { RateLimits } from "./rate-limit/acquire.ts";
import type { RoutePlanner } from "./routing/plan.ts";
import type { RoutingSettings } from "./routing/types.ts";
import type { RequestValidators } from "./validation/request-validators.ts";
import type { UsageCounters } from "./usage/usage-counters.ts";

export interface AppContext {
  models: ModelTable;
  /** A request's targets in order: its model or a pool's pick, then fallbacks (README, "Routing and resilience"). */
  planner: RoutePlanner;
  /** The routing settings of a provider: `routing`'s with its own overrides. */
  settingsOf(provider: string): RoutingSettings;
  /** The circuit of each target, for this router's process. */
  breakers: CircuitBreakers;
  /** What each request cost, at the config's `pricing`. */
  pricing: Pricing;
  /** This router's metrics (its own prom-client registry), served by `GET /metrics`. */
  metrics: RouterMetrics;
  /** This router's last day of requests, per minute, for the status page (`activity` middleware). */
  activity: ActivityWindow;
  validators: RequestValidators;
  /** `server.upstream_body_limit`: what is kept of one upstream reply, a stored stream's answer too. */
  upstreamBodyLimit: number;
  logger: ConsolaInstance;
  /** Where `store: true` completions go; undefined when `storage` is not configured. */
  storage: Storage | undefined;
  /** Generated images kept for their URLs (docs/interface.md, "Images"). */
  images: ImageStore;
  /** How the URLs of those images find the router's public origin (`server.public_url`, `server.trusted_proxies`). */
  originPolicy: OriginPolicy;
  /** The check of a request's credential: what `requireAdmin` (`server/auth/admin.ts`) guards admin routes with. */
  authenticate: Authenticate;
  /** The limiter and the configured limits, for the status page; undefined without `rate_limit`. */
  rateLimits: RateLimits | undefined;
  /** Whether the storage's and the rate limiter's backends answer, for `GET /readyz`. */
  checkReadiness: CheckReadiness;
  /** The usage counters `GET /v1/usage` reads (README, "Usage"). */
  usage: UsageCounters;
  /** Where `/v1/responses` is forwarded (`responses.provider`), or why it is off. */
  responses: ResponsesTarget | { off: string };
}

/** The one provider the responses API is forwarded to (docs/interface.md, "Responses API"). */
export interface ResponsesTarget {
  provider: string;
  instance: Provider;
  timeoutMs: number;
}
