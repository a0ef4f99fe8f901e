/**
 * The responses API (docs/interface.md, "Responses API"), forwarded one-to-one to `responses.provider`:
 * `POST /v1/responses` (validated; the model must be that provider's, and its name is made bare),
 * and, so that background responses can be polled and cancelled, `GET` and `DELETE
 * /v1/responses/{id}`, `POST /v1/responses/{id}/cancel` and `GET /v1/responses/{id}/input_items`,
 * each with the client's query string. Replies are relayed unchanged (`responses/relay.ts`).
 * API keys only: an identity-provider token gets 401 here (docs/interface.md, "Authentication").
 */
import type { AppContext, ResponsesTarget } from "../app-context.ts";
import { assertCapability, BASE_CAPABILITIES } from "../capabilities.ts";
import { invalidApiKey, invalidRequest, notFound } from "../errors.ts";
import { toBodyReadError, toUpstreamError } from "../upstream/client.ts";
import type { Exchange } from "../server/exchange.ts";
import { streamFailed } from "../server/stream-failure.ts";
import { bytesReply, sseReply, type Reply } from "../server/reply.ts";
import type { ForwardReply, ForwardRequest } from "../plugin.ts";
import { settleAfterStream, tokenReservation, type TokenReservation } from "../rate-limit/acquire.ts";
import type { ModelEntry } from "../models/model-table.ts";
import { routeRequest } from "../routing/routed-call.ts";
import { openSseRelay, readReplyBytes } from "./relay.ts";
import { usageOfResponseText } from "./usage.ts";
import type { Usage } from "../types/chat.ts";
import { readJsonBody } from "../server/read-body.ts";
import { SSE_HEADERS, type SseFrame } from "../sse/write.ts";

const EVENT_STREAM = /^text\/event-stream/i;

/** The target, once the caller is known to hold an API key. */
function targetFor(ctx: AppContext, x: Exchange): ResponsesTarget {
  if (x.principal && x.principal.scheme !== "api_key") {
    throw invalidApiKey("The responses API accepts API keys only: send 'Authorization: Bearer <key>' with a key from auth.api_keys.");
  }
  if ("off" in ctx.responses) throw notFound(`The responses API is off: ${ctx.responses.off}`);
  return ctx.responses;
}

/** The `{id}` of the path, refused when it could climb out of `/responses/` upstream. */
function responseId(x: Exchange): string {
  const id = x.params.id ?? "";
  if (id === "" || id === "." || id === "..") throw notFound(`No response with id '${id}'`);
  return encodeURIComponent(id);
}

/** What one attempt relayed: a stream open at its first event, or a whole reply. */
type Relayed = { frames: AsyncIterator<SseFrame> } | { body: Buffer; status: number; contentType: string };

/** The target of a call that names no model (a poll, a cancel): the provider's responses API. */
function pollEntry({ provider, instance, timeoutMs }: ResponsesTarget): ModelEntry {
  return { name: `${provider}/responses`, provider, model: "", instance, capabilities: BASE_CAPABILITIES, timeoutMs, imageOptions: new Set(), id: 0 };
}

export function createResponsesHandlers(ctx: AppContext) {
  /**
   * Counts the call against the rate limits (polls too: each one is a call to the provider), calls
   * the provider and relays its reply, retried on that one provider until its first byte
   * (`routing/routed-call.ts`); the usage of a finished reply settles the token reservation and
   * goes to the access log.
   */
  async function forward(x: Exchange, target: ResponsesTarget, request: ForwardRequest, entry: ModelEntry | undefined, reserve?: TokenReservation): Promise<Reply> {
    const { provider, instance, timeoutMs } = target;
    if (!instance.responses) throw notFound(`The responses API is off: provider '${provider}' cannot forward it`);
    const forwardTo = instance.responses.bind(instance);
    let usage: Usage | undefined;
    const settle = (reported: Usage | undefined) => {
      usage = reported;
      if (reported) x.usage = reported;
    };
    const routed = await routeRequest(ctx, x, {
      // A poll names no model: its target is the provider's responses API.
      targets: [{ entry: entry ?? pollEntry(target), settings: ctx.settingsOf(provider) }],
      ...(reserve && { reserve }),
      run: async (_target, call): Promise<Relayed> => {
        let reply: ForwardReply;
        try {
          reply = await forwardTo(request, call);
        } catch (error) {
          throw toUpstreamError(error, provider, timeoutMs);
        }
        if (EVENT_STREAM.test(reply.contentType)) {
          // The headers go once the first event is here: a failure before it is an error reply.
          const frames = await openSseRelay(reply.body, {
            provider,
            classify: (error: unknown) => toBodyReadError(error, provider, timeoutMs),
            clientGone: () => x.abort.aborted,
            onEnd: settle,
            onError: (error: unknown) => streamFailed(ctx.logger, x, `responses stream from ${provider}`, error),
          });
          return { frames };
        }
        try {
          return { body: await readReplyBytes(reply.body), status: reply.status, contentType: reply.contentType };
        } catch (error) {
          throw toBodyReadError(error, provider, timeoutMs);
        }
      },
    });
    const { value, grant, headers } = routed;
    if ("frames" in value) return sseReply(Object.assign({}, SSE_HEADERS, headers), settleAfterStream(value.frames, () => grant.settle(usage)));
    if (request.method === "POST" || request.method === "GET") settle(usageOfResponseText(value.body.toString("utf8")));
    grant.settle(usage);
    headers["content-type"] = value.contentType;
    return bytesReply(value.body, headers, value.status);
  }

  return {
    async createResponse(x: Exchange) {
      const target = targetFor(ctx, x);
      const body = ctx.validators.responses(await readJsonBody(x));
      x.requestedModel = body.model;
      if (body.stream === true) x.stream = true;
      const entry = ctx.models.resolve(body.model);
      x.model = entry.name;
      if (entry.provider !== target.provider) {
        const fix = `name one of providers.${target.provider}.models, or set responses.provider to '${entry.provider}' if that provider serves it`;
        throw invalidRequest(`Model '${entry.name}' does not support responses: /v1/responses is forwarded to provider '${target.provider}' only; ${fix}`, {
          code: "unsupported_feature",
          param: "model",
        });
      }
      assertCapability(entry.capabilities, "responses", entry.name);
      if (body.stream === true) assertCapability(entry.capabilities, "streaming", entry.name, "stream");
      // Everything but the model name reaches the provider as the client sent it.
      const forwarded = JSON.stringify({ ...body, model: entry.model });
      return forward(x, target, { method: "POST", path: "/responses", body: forwarded, stream: body.stream === true }, entry, tokenReservation(body));
    },

    async getResponse(x: Exchange) {
      const target = targetFor(ctx, x);
      const stream = x.query.get("stream") === "true";
      return forward(x, target, { method: "GET", path: `/responses/${responseId(x)}${x.search}`, stream }, undefined);
    },

    async deleteResponse(x: Exchange) {
      const target = targetFor(ctx, x);
      return forward(x, target, { method: "DELETE", path: `/responses/${responseId(x)}`, stream: false }, undefined);
    },

    async cancelResponse(x: Exchange) {
      const target = targetFor(ctx, x);
      // No body (docs/interface.md, "Request bodies": the 415 rule does not apply); whatever was sent is not forwarded.
      return forward(x, target, { method: "POST", path: `/responses/${responseId(x)}/cancel`, stream: false }, undefined);
    },

    async listInputItems(x: Exchange) {
      const target = targetFor(ctx, x);
      return forward(x, target, { method: "GET", path: `/responses/${responseId(x)}/input_items${x.search}`, stream: false }, undefined);
    },
  };
}
