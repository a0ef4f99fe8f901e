/**
 * modelmux-provider-parrot: a third-party modelmux provider for the (invented) Parrot completion
 * API, as a package that depends on `@modelmux/core` only. This file is the transport: options,
 * headers, the HTTP call and its errors. The translation lives in `request.ts`, `response.ts` and
 * `stream.ts`; the wire format in `parrot-api.ts`.
 */
import { defineProvider, postUpstream, readUpstreamText, type ChatRequest, type HttpResponse, type JsonSchema, type PluginContext, type Provider, type ProviderCall } from "@modelmux/core";
import { toParrotRequest } from "./request.ts";
import { parseReplyText, toProviderError } from "./response.ts";
import { readParrotStream } from "./stream.ts";

/** The plugin's own keys of a `providers.<name>` block. */
export interface ParrotOptions {
  /** The API root; requests go to `${base_url}/v2/generate`. */
  base_url: string;
  /** Sent as `X-Parrot-Key` when set. */
  api_key?: string;
}

/** Checked by the core with Ajv before the server starts: a typo such as `base_ur` is a config error. */
export const optionsSchema: JsonSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    // `http-url` is the core's format: an absolute http(s) URL (`uri` would take `localhost:8080`).
    base_url: { type: "string", format: "http-url", default: "https://api.parrot.example" },
    api_key: { type: "string" },
  },
};

function setup(options: ParrotOptions, ctx: PluginContext): Provider {
  const url = `${options.base_url.replace(/\/+$/, "")}/v2/generate`;
  const auth: Record<string, string> = options.api_key ? { "x-parrot-key": options.api_key } : {};

  /**
   * Sends the request with the call's signal and timeout (the core's `postUpstream`, which listens
   * to `call.signal` for the plugin); an error reply is thrown as the core's error for it.
   */
  function send(request: ChatRequest, call: ProviderCall): Promise<HttpResponse> {
    return postUpstream(ctx, call, {
      url,
      headers: { "content-type": "application/json", accept: request.stream ? "text/event-stream" : "application/json", ...auth },
      body: toParrotRequest(request, call.model),
      toError: (reply) => toProviderError(ctx.name, reply),
    });
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
export default defineProvider<ParrotOptions>({ name: "parrot", optionsSchema, setup });
