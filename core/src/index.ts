/**
 * @modelmux/core: the public API for embedding the router and for writing plugins.
 */
export { createRouter, type Router, type RouterOptions } from "./router.ts";
export { startServer, type RunningServer } from "./server/listen.ts";
// The router's h3 middleware (README, "Middleware"): the defaults' factories, and how a middleware of your own reads a request.
export type { Middleware } from "h3";
export { requestId, type RequestIdOptions } from "./server/middleware/request-id.ts";
export { accessLog, type AccessLogOptions } from "./server/middleware/access-log.ts";
export { metrics, type MetricsMiddlewareOptions } from "./server/middleware/metrics.ts";
export type { RouterMetrics } from "./operations/metrics.ts";
export { activity, type ActivityOptions } from "./server/middleware/activity.ts";
export { auth, type AuthOptions } from "./server/middleware/auth.ts";
export { cors, CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS, type CorsOptions } from "./server/middleware/cors.ts";
export { bodyLimit, type BodyLimitOptions } from "./server/middleware/body-limit.ts";
export { rateLimit, type RateLimitOptions } from "./server/middleware/rate-limit.ts";
export { usageCounters, type UsageCountersOptions } from "./server/middleware/usage-counters.ts";
export { exchangeOf } from "./server/event-exchange.ts";
export type { Exchange, EndListener } from "./server/exchange.ts";
export type { Principal } from "./server/auth/authenticate.ts";
export { loadConfigFile, readConfigFile, type ConfigFile, type LoadedConfigFile } from "./config/load-config.ts";
export { ConfigError } from "./config/config-error.ts";
export { createLogger, type Logger, type LoggerOptions } from "./logger.ts";
export { defineProvider, defineStorage, defineRateLimiter, costUnits, COST_UNITS_PER_USD } from "./plugin.ts";
export type {
  JsonSchema,
  PluginContext,
  PluginDefinition,
  Provider,
  ProviderCall,
  ProviderDefinition,
  RateLimitAcquire,
  RateLimitDecision,
  RateLimiter,
  RateLimiterDefinition,
  RateLimitRule,
  RateLimitRuleState,
  RateLimitSettle,
  RateLimitSubject,
  Storage,
  StorageContext,
  StorageDefinition,
  StoredCompletion,
  CompletionListQuery,
  CompletionOwner,
  CompletionPage,
  ChatEventStream,
  ForwardCall,
  ForwardReply,
  ForwardRequest,
  StoredImage,
  UsageCounts,
  UsageDelta,
  UsageRange,
  UsageRow,
} from "./plugin.ts";
// For storage plugins that keep usage counters (docs/plugins.md, "Usage counters").
export { oldestUsageDay, usageDays, USAGE_RETENTION_DAYS } from "./usage/usage-days.ts";
export type { ImageGenerationRequest } from "./schemas/images-request.ts";
export type { EmbeddingEncoding, EmbeddingsRequest } from "./schemas/embeddings-request.ts";
export { MAX_EMBEDDING_INPUTS, MAX_EMBEDDING_INPUT_TOKENS, embeddingInputs } from "./schemas/embeddings-request.ts";
export type * from "./types/embeddings.ts";
export type * from "./types/images.ts";
export { IMAGE_OPTIONS } from "./types/images.ts";
export { CAPABILITY_NAMES, type Capabilities, type Capability } from "./capabilities.ts";
export {
  ModelmuxError,
  providerError,
  upstreamError,
  upstreamTimeout,
  invalidRequest,
  type ErrorEnvelope,
  type ErrorType,
  type ProviderErrorInit,
} from "./errors.ts";
export { createHttpClient, headerValue, toBodyReadError, toUpstreamError, type AbortHook, type AbortListener, type HttpBody, type HttpClient, type HttpRequest, type HttpResponse } from "./upstream/client.ts";
export { bufferLimitOf, UpstreamBodyTooLarge } from "./upstream/client.ts";
export {
  postUpstream,
  sendUpstream,
  readUpstreamText,
  parseUpstreamJson,
  type RawUpstreamRequest,
  type UpstreamRequest,
  type UpstreamErrorReply,
} from "./upstream/send.ts";
export { readSseEventBatches, readSseEvents, type EventSourceMessage } from "./sse/read.ts";
export { replyBody } from "./upstream/in-process-body.ts";
export { withRawJson } from "./chat/raw-json.ts";
export { parseJsonArgument, type JsonArgumentOptions } from "./utils/json-argument.ts";
export { choiceCount } from "./chat/chunk-check.ts";
export type * from "./types/chat.ts";
export type {
  AliasConfig,
  CircuitBreakerConfig,
  ModelmuxConfig,
  PoolAliasConfig,
  ProviderConfig,
  RetryConfig,
  RoutingConfig,
  TimeoutsConfig,
} from "./config/types.ts";
export type { FromSchema } from "./plugins/options-type.ts";
export * from "./provider-kit/index.ts";
