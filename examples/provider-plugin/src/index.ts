/**
 * modelmux-provider-parrot: a third-party modelmux provider for the (invented) Parrot completion
 * API, as a package that depends on `@modelmux/core` only. This file is the transport: options,
 * headers, the HTTP call and its errors, with the core's provider kit (docs/plugins.md, "The
 * provider kit"). The translation lives in `request.ts`, `response.ts` and
 * `stream.ts`; the wire format in `parrot-api.ts`.
 */
import { apiRoot, defineProvider, joinUrl, postUpstream, readUpstreamText, upstreamHeaders, type ChatRequest, type FromSchema, type HttpResponse, type PluginContext, type Provider, type ProviderCall } from "@modelmux/core";
import { toParrotRequest } from "./request.ts";
import { parrotErrors, parseReplyText } from "./response.ts";
import { readParrotStream } from "./stream.ts";

/** The plugin's own keys of a `providers.<name>` block, checked by the core with Ajv before the server starts: a typo such as `base_ur` is a config error. */
export const optionsSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    // The API root; requests go to `${base_url}/v2/generate`. `http-url` is the core's format: an
    // absolute http(s) URL (`uri` would take `localhost:8080`).
    base_url: { type: "string", format: "http-url", default: "https://api.parrot.example" },
    // Sent as `X-Parrot-Key` when set.
    api_key: { type: "string" },
  },
} as const;

/** `{ base_url?: string; api_key?: string }`, read from the schema: the two cannot drift. */
export type ParrotOptions = FromSchema<typeof optionsSchema>;

function setup(options: ParrotOptions, ctx: PluginContext): Provider {
  // The core's provider kit: the URL checked once, the headers merged once, errors read with the key removed.
  const url = joinUrl(apiRoot(options.base_url, "https://api.parrot.example"), "/v2/generate");
  const headers = upstreamHeaders({ apiKey: options.api_key, auth: "x-parrot-key" });
  const { fromReply: toError } = parrotErrors(ctx.name, headers.secrets);

  /**
   * Sends the request with the call's signal and timeout (the core's `postUpstream`, which listens
   * to `call.signal` for the plugin); an error reply is thrown as the core's error for it.
   */
  function send(request: ChatRequest, call: ProviderCall): Promise<HttpResponse> {
    return postUpstream(ctx, call, { url, headers: request.stream ? headers.stream : headers.json, body: toParrotRequest(request, call.model), toError });
  }

  return {
    // Parrot models chat, stream and call tools (one call per reply); everything else stays off,
    // so the core refuses images, JSON mode, `n`… with a 400 before any upstream call.
    capabilities: () => ({ chat: true, streaming: true, tools: true }),

    async chat(request, call) {
      const res = await send(request, call);
      // A body that stalls is 504, one that breaks off 502.
      return parseReplyText(await readUpstreamText(ctx, call, res), { provider: ctx.name, model: call.model });
    },

    // The one stream a provider gives (the core frames it): Parrot's chunks one at a time, the
    // simplest form. An upstream that sends many events per read may yield an array per read instead.
    async chatStream(request, call) {
      const res = await send(request, call);
      return readParrotStream(res.body, { provider: ctx.name, model: call.model, timeoutMs: call.timeoutMs });
    },
  };
}

/**
 * The provider plugin. In a config, by path or, once installed, by package name:
 * @example
 * providers:
 *   parrot: { plugin: ./src/index.ts, base_url: http://127.0.0.1:7000, api_key: ${PARROT_API_KEY}, models: [parrot-1] }
 *   parrot2: { plugin: modelmux-provider-parrot, models: [parrot-1] }
 */
export default defineProvider({ name: "parrot", optionsSchema, setup });
