/**
 * The responses API (contract §4), forwarded one-to-one to `responses.provider`:
 * `POST /v1/responses` (validated; the model must be that provider's, and its name is made bare),
 * and, so that background responses can be polled and cancelled, `GET` and `DELETE
 * /v1/responses/{id}`, `POST /v1/responses/{id}/cancel` and `GET /v1/responses/{id}/input_items`,
 * each with the client's query string. Replies are relayed unchanged (`responses/relay.ts`).
 * API keys only: an identity-provider token gets 401 here (contract §5).
 */
import { getRouterParam, type H3Event } from "h3";
import type { AppContext, ResponsesTarget } from "../app-context.ts";
import { assertCapability } from "../capabilities.ts";
import { invalidApiKey, invalidRequest, notFound } from "../errors.ts";
import { toBodyReadError, toUpstreamError } from "../http-client.ts";
import type { ForwardReply, ForwardRequest } from "../plugin.ts";
import { acquireRateLimit, settleAfterStream, tokenReservation, type TokenReservation } from "../rate-limit/acquire.ts";
import { relaySse, usageOfResponse } from "../responses/relay.ts";
import type { Usage } from "../types/chat.ts";
import { asBody, readJsonBody } from "../utils/read-body.ts";
import { sendSse, SSE_HEADERS } from "../utils/sse-write.ts";

const EVENT_STREAM = /^text\/event-stream/i;

/** The target, once the caller is known to hold an API key. */
function targetFor(ctx: AppContext, event: H3Event): ResponsesTarget {
  if (event.context.principal && event.context.principal.scheme !== "api_key") {
    throw invalidApiKey("The responses API accepts API keys only (contract §5): send 'Authorization: Bearer <key>' with a key from auth.api_keys.");
  }
  if ("off" in ctx.responses) throw notFound(`The responses API is off: ${ctx.responses.off}`);
  return ctx.responses;
}

/** The `{id}` of the path, refused when it could climb out of `/responses/` upstream. */
function responseId(event: H3Event): string {
  let id: string;
  try {
    id = decodeURIComponent(getRouterParam(event, "id") ?? "");
  } catch {
    id = "";
  }
  if (id === "" || id === "." || id === "..") throw notFound(`No response with id '${id}'`);
  return encodeURIComponent(id);
}

export function createResponsesHandlers(ctx: AppContext) {
  /**
   * Counts the call against the rate limits (polls too: each one is a call to the provider), calls
   * the provider and relays its reply; the usage of a finished reply settles the token reservation
   * and goes to the access log.
   */
  async function forward(event: H3Event, target: ResponsesTarget, request: ForwardRequest, reserve?: TokenReservation) {
    const { provider, instance, timeoutMs } = target;
    if (!instance.responses) throw notFound(`The responses API is off: provider '${provider}' cannot forward it`);
    const signal = event.req.signal;
    const call = { signal, timeoutMs, requestId: event.context.requestId };
    const grant = await acquireRateLimit(ctx, event, { provider, ...(reserve && { reserve }) });
    const reply: ForwardReply = await instance.responses(request, call).catch((error: unknown) => {
      grant.settle();
      throw toUpstreamError(error, provider, timeoutMs);
    });
    let usage: Usage | undefined;
    const settle = (reported: Usage | undefined) => {
      usage = reported;
      if (reported) event.context.usage = reported;
    };

    if (EVENT_STREAM.test(reply.contentType)) {
      const frames = relaySse(reply.body, {
        classify: (error) => toBodyReadError(error, provider, timeoutMs),
        clientGone: () => signal.aborted,
        onEnd: settle,
        onError: (error) => ctx.logger.warn(`responses stream from ${provider} failed mid-way`, { request_id: event.context.requestId }, error),
      });
      const headers = { ...SSE_HEADERS, ...grant.headers, "x-request-id": event.context.requestId };
      return sendSse(event, headers, settleAfterStream(frames, () => grant.settle(usage)));
    }

    let body: Buffer;
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of reply.body as AsyncIterable<Buffer>) chunks.push(chunk);
      body = Buffer.concat(chunks);
    } catch (error) {
      grant.settle();
      throw toBodyReadError(error, provider, timeoutMs);
    }
    if (request.method === "POST" || request.method === "GET") {
      try {
        settle(usageOfResponse(JSON.parse(body.toString("utf8"))));
      } catch {
        // Not JSON: relayed as is all the same; it only has no usage to count.
      }
    }
    grant.settle(usage);
    return new Response(asBody(body), {
      status: reply.status,
      headers: { ...grant.headers, "content-type": reply.contentType, "x-request-id": event.context.requestId },
    });
  }

  return {
    async createResponse(event: H3Event) {
      const target = targetFor(ctx, event);
      const body = ctx.validators.responses(await readJsonBody(event, ctx.bodyLimit));
      const entry = ctx.models.resolve(body.model);
      event.context.model = entry.name;
      if (entry.provider !== target.provider) {
        throw invalidRequest(`Model '${entry.name}' does not support responses: /v1/responses is forwarded to provider '${target.provider}' only`, {
          code: "unsupported_feature",
          param: "model",
        });
      }
      assertCapability(entry.capabilities, "responses", entry.name);
      if (body.stream === true) assertCapability(entry.capabilities, "streaming", entry.name, "stream");
      // Everything but the model name reaches the provider as the client sent it.
      const forwarded = JSON.stringify({ ...body, model: entry.model });
      return forward(event, target, { method: "POST", path: "/responses", body: forwarded, stream: body.stream === true }, tokenReservation(body));
    },

    async getResponse(event: H3Event) {
      const target = targetFor(ctx, event);
      const query = event.url.search;
      const stream = event.url.searchParams.get("stream") === "true";
      return forward(event, target, { method: "GET", path: `/responses/${responseId(event)}${query}`, stream });
    },

    async deleteResponse(event: H3Event) {
      const target = targetFor(ctx, event);
      return forward(event, target, { method: "DELETE", path: `/responses/${responseId(event)}`, stream: false });
    },

    async cancelResponse(event: H3Event) {
      const target = targetFor(ctx, event);
      // No body (contract §7: the 415 rule does not apply); whatever was sent is not forwarded.
      return forward(event, target, { method: "POST", path: `/responses/${responseId(event)}/cancel`, stream: false });
    },

    async listInputItems(event: H3Event) {
      const target = targetFor(ctx, event);
      return forward(event, target, { method: "GET", path: `/responses/${responseId(event)}/input_items${event.url.search}`, stream: false });
    },
  };
}
