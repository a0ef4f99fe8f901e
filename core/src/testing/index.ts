/**
 * @modelmux/core/testing: the conformance kit for provider plugins. It needs vitest.
 */
export { testProvider, type ProviderConformanceOptions } from "./test-provider.ts";
export type { ConformanceUpstream, ReceivedRequest, ScriptedReply, UpstreamRequestReader } from "./types.ts";
export { parseChunks, readSseData, streamedText, streamedToolCalls } from "./sse-client.ts";
