/**
 * @modelmux/core/testing: the conformance kits plugins end their tests with: `testProvider` for
 * provider plugins, `testStorage` for storage plugins, `testRateLimiter` for rate limiters. They
 * need vitest. `startSilentServer` is a backend that never answers, for a plugin's timeout tests.
 */
export { testProvider, type ProviderConformanceOptions } from "./test-provider.ts";
export type { ConformanceUpstream, ReceivedRequest, ScriptedReply, UpstreamRequestReader } from "./types.ts";
export { parseChunks, readSseData, streamedText, streamedToolCalls } from "./sse-client.ts";
export { testStorage, sampleCompletion, type StorageConformanceOptions } from "./test-storage.ts";
export { testRateLimiter, type RateLimiterConformanceOptions } from "./test-rate-limiter.ts";
export { thrown } from "./thrown.ts";
/** The JSON text a plugin gave an object with `withRawJson`: a plugin's test checks it against the object. */
export { rawJsonOf } from "../chat/raw-json.ts";
export { startSilentServer, type SilentServer } from "./silent-server.ts";
