/**
 * @modelmux/provider-echo: a deterministic offline provider. It echoes the last user message, calls
 * a tool when asked to, and streams like a real model, so a new user and their app's tests can use
 * the router with no API key and no network. The rules are in README.md and in `reply.ts`.
 */
import { randomUUID } from "node:crypto";
import { defineProvider, type Capabilities, type ChatRequest, type JsonSchema, type Provider, type ProviderCall } from "@modelmux/core";
import { echoEmbeddings } from "./embedding.ts";
import { ECHO_IMAGE_OPTIONS, generateImages } from "./image.ts";
import { planReply } from "./reply.ts";
import { createEchoResponses } from "./responses.ts";
import { toCompletion, type ReplyMeta } from "./response.ts";
import { streamReply } from "./stream.ts";

/** The keys of a `providers.<name>` block with `plugin: provider-echo`. */
export interface EchoOptions {
  /** Characters per streamed content (or tool arguments) chunk. Default 8. */
  chunk_size?: number;
  /** Pause between streamed chunks, in ms. Default 0; set it for demos or to test disconnects. */
  delay_ms?: number;
  /** Text put before every text reply. Default "". */
  prefix?: string;
}

/** The JSON Schema the core validates `EchoOptions` with when the plugin loads. */
export const optionsSchema: JsonSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    chunk_size: { type: "integer", minimum: 1, default: 8, description: "Characters per streamed chunk." },
    delay_ms: { type: "integer", minimum: 0, default: 0, description: "Pause between streamed chunks, in ms." },
    prefix: { type: "string", default: "", description: "Text put before every text reply." },
  },
};

/**
 * What the echo model can do; the same for every model id. Complete on purpose: a capability added
 * to the core fails the type check here until the echo model takes a side.
 */
const CAPABILITIES: Capabilities = {
  chat: true,
  streaming: true,
  tools: true,
  parallel_tool_calls: true,
  json_mode: true,
  json_schema: true,
  n: true,
  // Image parts are accepted and echoed as "[image]".
  vision: true,
  logprobs: false,
  audio: false,
  reasoning_effort: false,
  // A 16×16 PNG in the prompt's colour.
  images: true,
  // The Responses API in OpenAI's wire format, echoing the last user input (`responses.ts`).
  responses: true,
  // Vectors hashed from the text: the same text, the same vector (`embedding.ts`).
  embeddings: true,
  // A final assistant message is continued, not answered anew (`reply.ts`, `continueReply`).
  prefill: true,
};

/** `id` and `created` are the only reply fields that differ between two identical requests. */
function replyMeta(request: ChatRequest, call: ProviderCall): ReplyMeta {
  return {
    // Random, not derived from the request: stored completions are keyed by id, and two identical
    // requests must not overwrite each other.
    id: `chatcmpl-echo-${randomUUID()}`,
    created: Math.floor(Date.now() / 1000),
    model: call.model,
    serviceTier: request.service_tier,
  };
}

export default defineProvider<EchoOptions>({
  name: "echo",
  optionsSchema,
  setup({ chunk_size: chunkSize = 8, delay_ms: delayMs = 0, prefix = "" }, ctx): Provider {
    // ctx.http is never used: the echo model answers without a network.
    return {
      capabilities: () => ({ ...CAPABILITIES }),
      imageOptions: () => ECHO_IMAGE_OPTIONS,
      responses: createEchoResponses({ name: ctx.name, prefix, chunkSize }),
      async images(request, call) {
        call.signal.throwIfAborted();
        return generateImages(request);
      },
      async embeddings(request, call) {
        call.signal.throwIfAborted();
        return echoEmbeddings(request, ctx.name);
      },
      async chat(request, call) {
        call.signal.throwIfAborted();
        return toCompletion(planReply(request, prefix), replyMeta(request, call));
      },
      async chatStream(request, call) {
        call.signal.throwIfAborted();
        // Planned before the first chunk, so a bad request fails as an error reply, not mid-stream.
        const plan = planReply(request, prefix);
        return streamReply(plan, replyMeta(request, call), { chunkSize, delayMs, signal: call.signal });
      },
    };
  },
});
