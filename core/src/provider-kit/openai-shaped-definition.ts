/**
 * `defineOpenAIShapedProvider`: a whole provider plugin for an OpenAI-shaped upstream from a
 * short description (docs/plugins.md, "The provider kit"; `examples/openai-shaped-provider`). Its
 * options are the common three, `base_url`, `api_key` and `headers`.
 */
import type { PluginContext, ProviderDefinition } from "../plugin.ts";
import { defineProvider } from "../plugin.ts";
import type { FromSchema } from "../plugins/options-type.ts";
import { apiRoot } from "./base-url.ts";
import { capabilityTable, type CapabilityTableOptions } from "./capability-table.ts";
import { errorMapper } from "./error-reply.ts";
import { upstreamHeaders, type HeaderOptions } from "./headers.ts";
import { openaiShapedProvider, type OpenAIShapedProviderOptions } from "./openai-shaped.ts";

/** The options of a provider made by `defineOpenAIShapedProvider`; `base_url`'s default is the description's. */
export const openaiShapedOptionsSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    // The core's `http-url` format: `uri` alone would take `localhost:8080` (scheme "localhost").
    base_url: { type: "string", format: "http-url" },
    api_key: { type: "string" },
    headers: { type: "object", additionalProperties: { type: "string" } },
  },
} as const;

export type OpenAIShapedOptions = FromSchema<typeof openaiShapedOptionsSchema>;

/** A provider, described. */
export interface OpenAIShapedDescription extends Pick<OpenAIShapedProviderOptions, "requestIdHeader" | "images" | "embeddings" | "responses" | "prefillStyle"> {
  /** The plugin's name, in logs and errors. */
  name: string;
  /** The default `base_url`, the API root: requests go to `${base_url}/chat/completions`. */
  baseUrl: string;
  /** How the key is sent (`upstreamHeaders`): `Authorization: Bearer` by default. */
  auth?: HeaderOptions["auth"];
  /** Headers every request carries. */
  fixedHeaders?: HeaderOptions["fixed"];
  /** The capability defaults by model-id prefix. */
  capabilities: CapabilityTableOptions;
}

/**
 * Defines the plugin.
 * @example
 * export default defineOpenAIShapedProvider({
 *   name: "acme",
 *   baseUrl: "https://api.acme.example/v1",
 *   capabilities: { prefixes: { "acme-vision-": { chat: true, streaming: true, vision: true } }, fallback: { chat: true, streaming: true } },
 * });
 */
export function defineOpenAIShapedProvider(description: OpenAIShapedDescription): ProviderDefinition<OpenAIShapedOptions> {
  const { name, baseUrl, auth, fixedHeaders, requestIdHeader, images, embeddings, responses, prefillStyle } = description;
  const capabilities = capabilityTable(description.capabilities);
  const base_url = { ...openaiShapedOptionsSchema.properties.base_url, default: baseUrl };
  const optionsSchema = { ...openaiShapedOptionsSchema, properties: { ...openaiShapedOptionsSchema.properties, base_url } };
  return defineProvider<OpenAIShapedOptions>({
    name,
    optionsSchema,
    setup(options, ctx: PluginContext) {
      const headers = upstreamHeaders({ apiKey: options.api_key, auth, fixed: fixedHeaders, extra: options.headers });
      const errors = errorMapper({ provider: ctx.name, secrets: headers.secrets });
      return openaiShapedProvider(ctx, { root: apiRoot(options.base_url, baseUrl), headers, errors, capabilities, requestIdHeader, images, embeddings, responses, prefillStyle });
    },
  });
}
