/**
 * `createRouter(config)` (README, "Embedding"): everything that can be done once is done here,
 * before the first request: config checked, plugins loaded and set up, schemas compiled, model
 * table built.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { H3, Middleware } from "h3";
import type { AppContext } from "./app-context.ts";
import { createRoutes } from "./server/routes.ts";
import { createAuthenticator, type ApiKeyEntry } from "./server/auth/authenticate.ts";
import { checkConfig } from "./config/check-config.ts";
import { prepareConfig } from "./config/load-config.ts";
import type { ServerSettings } from "./config/resolve-config.ts";
import { resolveCors } from "./config/resolve-cors.ts";
import { resolveSwitchedOff } from "./config/resolve-switched-off.ts";
import { createJwtVerifier } from "./server/auth/jwt.ts";
import type { ModelmuxConfig } from "./config/types.ts";
import { createHttpClient, type HttpClient } from "./upstream/client.ts";
import { createApp } from "./server/app.ts";
import { createNodeHandler } from "./server/node-entry.ts";
import { accessLog } from "./server/middleware/access-log.ts";
import { metrics as metricsMiddleware } from "./server/middleware/metrics.ts";
import { RouterMetrics, type MetricsOptions } from "./operations/metrics.ts";
import { activity } from "./server/middleware/activity.ts";
import { ActivityWindow } from "./operations/activity.ts";
import { auth } from "./server/middleware/auth.ts";
import { bodyLimit } from "./server/middleware/body-limit.ts";
import { cors } from "./server/middleware/cors.ts";
import { rateLimit } from "./server/middleware/rate-limit.ts";
import { requestId } from "./server/middleware/request-id.ts";
import { usageCounters } from "./server/middleware/usage-counters.ts";
import { createUsageCounters, usageStoreOf } from "./usage/usage-counters.ts";
import { createReadinessCheck, readinessTargets } from "./health/readiness.ts";
import { createImageStore } from "./images/image-store.ts";
import { createLogger, type Logger } from "./logger.ts";
import { buildModelTable, type ModelTable } from "./models/model-table.ts";
import type { PluginDefinition, Storage } from "./plugin.ts";
import { setupProviders } from "./plugins/setup-providers.ts";
import { setupStorage } from "./plugins/setup-storage.ts";
import { setupRateLimits } from "./plugins/setup-ratelimit.ts";
import type { RateLimits } from "./rate-limit/acquire.ts";
import { resolveResponsesTarget, responsesWarning } from "./responses/target.ts";
import { CircuitBreakers } from "./routing/circuit-breaker.ts";
import { createRoutePlanner, type RoutePlanner } from "./routing/plan.ts";
import { createRequestValidators } from "./validation/request-validators.ts";

export interface RouterOptions {
  /** Folder that `./` plugin paths are resolved from. Default: the working directory. */
  baseDir?: string;
  /** Environment for `${VAR}` and `requires_env`. Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** A logger to use instead of one made from `config.logging`. */
  logger?: Logger;
  /** The HTTP client plugins get. Default: a new keep-alive undici client that reads at most `server.upstream_body_limit` of a reply. */
  http?: HttpClient;
  /** Plugin definitions by reference, used instead of importing (`{ "my-provider": myPlugin }`). */
  plugins?: Record<string, PluginDefinition>;
  /**
   * The middleware every request passes before its route, given the defaults in their order
   * (`requestId`, `accessLog`, `metrics`, `usageCounters`, `activity`, `cors` with `server.cors`, `auth`,
   * `bodyLimit`, `rateLimit`, each made from the config): return them reordered, replaced (by name)
   * or with your own added (docs/architecture.md, "Middleware").
   * @example middleware: (defaults) => [...defaults, function audit(event, next) { return next(); }]
   */
  middleware?: (defaults: readonly Middleware[]) => readonly Middleware[];
  /**
   * `GET /metrics` (README, "Metrics"): how many values a label fed by tokens' claims or providers'
   * error codes takes before `other` (default 100), and Node's process metrics (default off).
   */
  metrics?: Pick<MetricsOptions, "maxLabelValues" | "processMetrics">;
}

export interface Router {
  /** The standard fetch handler of `app`: `(request) => response`. */
  fetch(request: Request): Promise<Response>;
  /** The Node handler of `app`: `(req, res)`, for `node:http`, Express, Fastify's raw server… */
  handler(req: IncomingMessage, res: ServerResponse): void;
  /** The router's h3 app, which every request goes through: to mount in another h3 app. */
  readonly app: H3;
  models: ModelTable;
  settings: ServerSettings;
  logger: Logger;
  /** The router's metrics, served by `GET /metrics`; `metrics.registry` is its own prom-client `Registry` (README, "Metrics"). */
  readonly metrics: RouterMetrics;
  /** Keys generated at start because the configured key was empty (`generate_if_empty`). */
  generatedKeys: readonly ApiKeyEntry[];
  /**
   * What in the config is valid but will not work as meant (a `responses.provider` none of whose
   * models has the `responses` capability), with the fix: `modelmux check` prints them, `serve`
   * logs them; an embedder reads them here.
   */
  warnings: readonly string[];
  /** Writes the pending usage counters, then closes plugins and upstream connections. */
  close(): Promise<void>;
}

/**
 * Builds a router from a config object (the YAML file's shape; `${VAR}` is substituted here too).
 * @example
 * const router = await createRouter({
 *   auth: { api_keys: [{ key: "sk-local" }] },
 *   providers: { echo: { plugin: "provider-echo", models: ["echo-1"] } },
 * });
 * http.createServer(router.handler).listen(8080, "127.0.0.1");
 */
export async function createRouter(config: ModelmuxConfig, options: RouterOptions = {}): Promise<Router> {
  const env = options.env ?? process.env;
  const checked = prepareConfig(config, env);
  const logger = options.logger ?? createLogger(checked.logging);
  const loadContext = { baseDir: options.baseDir ?? process.cwd(), env, logger, plugins: options.plugins ?? {} };
  // Every check that needs nothing set up, all of them reported at once; then the set-up.
  const { settings, keys: { keys, generated }, jwt, originPolicy, served, aliases, routing, pricing, plugins } = await checkConfig(checked, loadContext);
  if (aliases.dropped.length > 0) logger.info(`aliases off with their provider: ${aliases.dropped.join(", ")}`);
  if (routing.dropped.length > 0) logger.info(`left out of fallbacks and pools with their provider: ${routing.dropped.join(", ")}`);
  const corsOptions = resolveCors(checked);
  const http = options.http ?? createHttpClient({ bufferLimit: settings.upstreamBodyLimit });
  const closeHttp = () => (options.http ? Promise.resolve() : http.close());

  const setupContext = { logger, http };
  const providers = await setupProviders(plugins.providers, setupContext).catch(async (error: unknown) => {
    await closeHttp();
    throw error;
  });
  let storage: Storage | undefined;
  let rateLimits: RateLimits | undefined;
  const closePlugins = () => Promise.allSettled([...providers.map((p) => p.instance.close?.()), storage?.close?.(), rateLimits?.limiter.close?.()]);
  let models: ModelTable;
  let planner: RoutePlanner;
  const settingsOf = routing.settingsOf;
  let responses: AppContext["responses"];
  try {
    responses = resolveResponsesTarget(checked, providers);
    models = buildModelTable(providers, aliases.aliases, resolveSwitchedOff(checked, served, env), routing.pools);
    planner = createRoutePlanner({ models, fallbacks: routing.fallbacks, settingsOf });
    storage = await setupStorage(plugins.storage, setupContext);
    rateLimits = await setupRateLimits(plugins.rateLimit, setupContext);
  } catch (error) {
    await closePlugins();
    await closeHttp();
    throw error;
  }

  // After the storage: the counters go to it when it keeps usage (README, "Usage").
  const usage = createUsageCounters({ store: usageStoreOf(storage, checked.storage?.plugin, logger), pricing, logger });
  const authenticate = createAuthenticator(keys, { verifyJwt: jwt && createJwtVerifier(jwt, logger.withTag("auth")) });
  const breakers = new CircuitBreakers();
  const metrics = new RouterMetrics({ models, breakers, pricing, keys, ...options.metrics });
  if (rateLimits) rateLimits.onRefusal = metrics.refused;
  const ctx: AppContext = {
    models,
    planner,
    settingsOf,
    breakers,
    pricing,
    metrics,
    activity: new ActivityWindow(),
    validators: createRequestValidators(),
    upstreamBodyLimit: settings.upstreamBodyLimit,
    logger,
    storage,
    images: createImageStore({ storage }),
    originPolicy,
    responses,
    authenticate,
    usage,
    rateLimits,
    checkReadiness: createReadinessCheck(readinessTargets(checked, storage, rateLimits?.limiter)),
  };
  const defaults = [
    requestId(),
    accessLog({ logger, pricing }),
    metricsMiddleware({ metrics }),
    usageCounters({ counters: usage }),
    activity({ window: ctx.activity, pricing }),
    // Only when configured: a router without `server.cors` pays nothing for it.
    ...(corsOptions ? [cors(corsOptions)] : []),
    auth({ authenticate }),
    bodyLimit({ limit: settings.bodyLimit }),
    ...(rateLimits ? [rateLimit({ limits: rateLimits })] : []),
  ];
  const writing = { logger, writeTimeoutMs: settings.writeTimeoutMs };
  const app = createApp({ ...writing, routes: createRoutes(ctx), middleware: options.middleware ? options.middleware(defaults) : defaults });

  return {
    fetch(request) {
      const response = app.fetch(request);
      return response instanceof Promise ? response : Promise.resolve(response);
    },
    handler: createNodeHandler(app, writing),
    app,
    models,
    settings,
    logger,
    metrics,
    generatedKeys: generated,
    warnings: [responsesWarning(responses, models)].filter((warning) => warning !== undefined),
    async close() {
      // Before the storage closes: the last batch goes to it.
      await usage.close();
      await closePlugins();
      await closeHttp();
      logger.flush();
    },
  };
}
