/**
 * `POST /v1/chat/completions`: validate, route by model, check capabilities, count the request
 * against its rate limits, call the provider, reply with the normalised completion or its SSE
 * stream, then count the reply's real token usage.
 */
import type { AppContext } from "../app-context.ts";
import { completionOwnerOf } from "../server/auth/authenticate.ts";
import { assertChatCapabilities } from "../capabilities.ts";
import { openEventRelay } from "./event-relay.ts";
import { rawJsonOf } from "./raw-json.ts";
import { removeServiceTier } from "./service-tier.ts";
import { openChatStreamFrames } from "./stream-frames.ts";
import { toProviderRequest } from "./provider-request.ts";
import { createCompletionAssembler } from "./assemble-completion.ts";
import { choiceCount } from "./chunk-check.ts";
import { invalidRequest, storageFailed } from "../errors.ts";
import { toUpstreamError } from "../upstream/client.ts";
import type { Exchange } from "../server/exchange.ts";
import { jsonReply, jsonTextReply, sseReply, type Reply } from "../server/reply.ts";
import type { ModelEntry } from "../models/model-table.ts";
import type { Storage } from "../plugin.ts";
import { providerCall, type CoreCall } from "../upstream/provider-call.ts";
import { acquireRateLimit, settleAfterStream, tokenReservation, type RateLimitGrant } from "../rate-limit/acquire.ts";
import type { ChatCompletion, ChatCompletionWithoutUsage, ChatRequest, Usage } from "../types/chat.ts";
import { readJsonBody } from "../server/read-body.ts";
import { SSE_HEADERS } from "../sse/write.ts";

/** What both reply paths need; one object instead of a closure per value. */
interface ChatCall {
  ctx: AppContext;
  x: Exchange;
  entry: ModelEntry;
  request: ChatRequest;
  providerRequest: ChatRequest;
  call: CoreCall;
  grant: RateLimitGrant;
  /** Set when `store: true`. */
  storage: Storage | undefined;
  /** The client set `service_tier`: replies keep it (docs/interface.md, "What the router changes"). */
  keepServiceTier: boolean;
}

export function createChatCompletionHandler(ctx: AppContext) {
  return async function createChatCompletion(x: Exchange): Promise<Reply> {
    const request = ctx.validators.chat(await readJsonBody(x));
    const entry = ctx.models.resolve(request.model);
    x.model = entry.name;
    assertChatCapabilities(request, entry.capabilities, entry.name);
    const storage = request.store ? ctx.storage : undefined;
    if (request.store && !storage) {
      throw invalidRequest("store: stored chat completions are off; configure a `storage` plugin to use store: true", {
        code: "unsupported_feature",
        param: "store",
      });
    }
    const providerRequest = toProviderRequest(request, entry.model);
    // Last step before the upstream call: a request refused by any check above never counts.
    const granted = acquireRateLimit(x, { provider: entry.provider, reserve: tokenReservation(request) });
    const grant = granted instanceof Promise ? await granted : granted;
    const chat: ChatCall = {
      ctx,
      x,
      entry,
      request,
      providerRequest,
      call: providerCall(x, entry.model, entry.timeoutMs),
      grant,
      storage,
      keepServiceTier: request.service_tier != null,
    };
    return request.stream ? streamReply(chat) : completionReply(chat);
  };
}

/**
 * Stores the finished reply under the caller's app (only that app sees it); the client hears of
 * success only once it is stored.
 */
async function save(chat: ChatCall, completion: ChatCompletion | ChatCompletionWithoutUsage): Promise<void> {
  const { request } = chat;
  try {
    await chat.storage!.saveCompletion({
      owner: completionOwnerOf(chat.x.principal),
      completion,
      messages: request.messages,
      model: chat.entry.name,
      metadata: request.metadata ?? {},
      createdAt: Date.now(),
    });
  } catch (error) {
    chat.ctx.logger.error("storing a completion failed", { request_id: chat.x.requestId }, error);
    throw storageFailed(error);
  }
}

async function completionReply(chat: ChatCall): Promise<Reply> {
  const { entry, grant } = chat;
  let completion: ChatCompletion | ChatCompletionWithoutUsage;
  try {
    completion = await entry.instance.chat(chat.providerRequest, chat.call);
  } catch (error) {
    grant.settle();
    throw toUpstreamError(error, entry.provider, entry.timeoutMs);
  }
  grant.settle(completion.usage);
  if (completion.usage) chat.x.usage = completion.usage;
  if (!chat.keepServiceTier) delete completion.service_tier;
  if (chat.storage) await save(chat, completion);
  // A completion that came as text in the client's form is sent as that text (`withRawJson`).
  const text = rawJsonOf(completion);
  if (text === undefined) return jsonReply(completion, 200, grant.headers);
  return jsonTextReply(chat.keepServiceTier ? text : removeServiceTier(text), 200, grant.headers);
}

async function streamReply(chat: ChatCall): Promise<Reply> {
  // A provider streams one way: relayed when it has `chatStreamEvents`, else framed.
  return chat.entry.instance.chatStreamEvents ? relayedStreamReply(chat) : framedStreamReply(chat);
}

/**
 * What both stream paths share: the client's choices (usage chunk, `service_tier`), storing the
 * assembled completion before `[DONE]` when `store: true`, the usage for the access log, and the
 * grant settled with it once the stream ends or is abandoned.
 */
function streamOptions(chat: ChatCall) {
  const { ctx, x, entry, grant, keepServiceTier } = chat;
  let usage: Usage | undefined;
  const assembler = chat.storage ? createCompletionAssembler(entry.provider, ctx.upstreamBodyLimit) : undefined;
  return {
    options: {
      provider: entry.provider,
      // Each choice must finish for the answer to be complete (`chat/chunk-check.ts`).
      choices: choiceCount(chat.request),
      classify: (error: unknown) => toUpstreamError(error, entry.provider, entry.timeoutMs),
      includeUsage: chat.request.stream_options?.include_usage === true,
      keepServiceTier,
      // The exchange's hook: the call's own also fires when the core cancels the call (`provider-call.ts`).
      clientGone: () => x.abort.aborted,
      // For the framed path (`chat/stream-frames.ts`), which cancels the call it stops reading early.
      call: chat.call,
      onUsage: (reported: Usage) => (usage = x.usage = reported),
      onError: (error: unknown) => ctx.logger.warn(`stream of ${entry.name} failed mid-way`, { request_id: x.requestId }, error),
      ...(assembler && {
        collect: assembler.add,
        beforeDone: () => {
          const completion = assembler.completion();
          if (!keepServiceTier) delete completion.service_tier;
          return save(chat, completion);
        },
      }),
    },
    /** The SSE reply of `frames`; the grant is settled with the stream's usage when they end. */
    reply: (frames: AsyncIterator<string>): Reply => sseReply({ ...SSE_HEADERS, ...grant.headers }, settleAfterStream(frames, () => grant.settle(usage))),
  };
}

/** The stream of a provider whose upstream speaks the client's format: relayed in whole reads (`chat/event-relay.ts`). */
async function relayedStreamReply(chat: ChatCall): Promise<Reply> {
  const { entry, grant } = chat;
  const { options, reply } = streamOptions(chat);
  try {
    const stream = await entry.instance.chatStreamEvents!(chat.providerRequest, chat.call);
    return reply(await openEventRelay(stream, { ...options, timeoutMs: entry.timeoutMs }));
  } catch (error) {
    grant.settle();
    throw options.classify(error);
  }
}

/** The stream of a provider that hands over chunks (`chatStream`), one at a time or a batch per upstream read. */
async function framedStreamReply(chat: ChatCall): Promise<Reply> {
  const { entry, grant } = chat;
  const { options, reply } = streamOptions(chat);
  try {
    // The stream's whole-wait deadline ends at its first chunk to send, not at its first event (a ping).
    chat.call.holdDeadlines();
    // A provider without `chatStreamEvents` has `chatStream`: checked when it loaded (`plugins/provider-contract-check.ts`).
    const stream = await entry.instance.chatStream!(chat.providerRequest, chat.call);
    // The first item is read before the headers: an early failure becomes a proper error reply.
    return reply(await openChatStreamFrames(stream[Symbol.asyncIterator](), options));
  } catch (error) {
    grant.settle();
    throw options.classify(error);
  }
}
