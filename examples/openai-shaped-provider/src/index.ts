/**
 * modelmux-provider-acme: a provider for Acme, an (invented) API that speaks OpenAI's Chat
 * Completions wire format, in a few lines with the core's provider kit (docs/plugins.md, "The
 * provider kit"). The kit does the rest: `base_url`, `api_key` and `headers` options checked at
 * start, `Authorization: Bearer`, chat replies read and normalised, streams relayed by the core,
 * error replies mapped with the key removed.
 */
import { defineOpenAIShapedProvider } from "@modelmux/core";

/** What every Acme model does. */
const CHAT = { chat: true, streaming: true, tools: true, json_mode: true } as const;

/**
 * In a config: `acme: { plugin: ./src/index.ts, api_key: ${ACME_API_KEY}, models: [acme-1] }`.
 */
export default defineOpenAIShapedProvider({
  name: "acme",
  baseUrl: "https://api.acme.example/v1",
  // Acme logs this header with each request: the router's request id finds it there.
  requestIdHeader: "x-request-id",
  // The longest matching prefix wins; a model the table does not name gets the fallback.
  capabilities: {
    prefixes: {
      "acme-vision-": { ...CHAT, vision: true },
      "acme-reason-": { ...CHAT, reasoning_effort: true },
    },
    fallback: CHAT,
  },
});
