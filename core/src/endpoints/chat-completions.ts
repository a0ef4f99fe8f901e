/**
 * `POST /v1/chat/completions`: validate, route by model, check capabilities, count the request
 * against its rate limits, call the provider, reply with the normalised completion or its SSE
 * stream, then count the reply's real token usage.
 */
import type { AppContext } from "../app-context.ts";
import { assertChatCapabilities } from "../capabilities.ts";
import { chatStreamFrames } from "../chat/stream-frames.ts";
import { toProviderRequest } from "../chat/provider-request.ts";
import { createCompletionAssembler } from "../chat/assemble-completion.ts";
import { invalidRequest, storageFailed } from "../errors.ts";
import { toUpstreamError } from "../http-client.ts";
import type { Exchange } from "../http/exchange.ts";
import { jsonReply, sseReply, type Reply } from "../http/reply.ts";
import { providerCall } from "../provider-call.ts";
import { acquireRateLimit, settleAfterStream, tokenReservation } from "../rate-limit/acquire.ts";
import type { ChatCompletion, ChatStreamItem, Usage } from "../types/chat.ts";
import { readJsonBody } from "../utils/read-body.ts";
import { SSE_HEADERS } from "../utils/sse-write.ts";

export function createChatCompletionHandler(ctx: AppContext) {
  return async function createChatCompletion(x: Exchange): Promise<Reply> {
    const request = ctx.validators.chat(await readJsonBody(x, ctx.bodyLimit));
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
    /** Stores the finished reply; the client hears of success only once it is stored. */
    const save = async (completion: ChatCompletion) => {
      try {
        await storage!.saveCompletion({ completion, messages: request.messages, model: entry.name, metadata: request.metadata ?? {}, createdAt: Date.now() });
      } catch (error) {
        ctx.logger.error("storing a completion failed", { request_id: x.requestId }, error);
        throw storageFailed(error);
      }
    };
    const call = providerCall(x, entry.model, entry.timeoutMs);
    const providerRequest = toProviderRequest(request, entry.model);
    const keepServiceTier = request.service_tier != null;
    const classify = (error: unknown) => toUpstreamError(error, entry.provider, entry.timeoutMs);
    // Last step before the upstream call: a request refused by any check above never counts.
    const grant = await acquireRateLimit(ctx, x, { provider: entry.provider, reserve: tokenReservation(request) });

    if (!request.stream) {
      const completion: ChatCompletion = await entry.instance.chat(providerRequest, call).catch((error: unknown) => {
        grant.settle();
        throw classify(error);
      });
      grant.settle(completion.usage);
      if (completion.usage) x.usage = completion.usage;
      if (!keepServiceTier) delete completion.service_tier;
      if (storage) await save(completion);
      return jsonReply(completion, 200, grant.headers);
    }

    let items: AsyncIterator<ChatStreamItem | readonly ChatStreamItem[]>;
    let first: IteratorResult<ChatStreamItem | readonly ChatStreamItem[]>;
    try {
      // A provider that reads items in batches hands them over so: one async step per upstream read.
      const provider = entry.instance;
      const stream = provider.chatStreamBatches ? await provider.chatStreamBatches(providerRequest, call) : await provider.chatStream(providerRequest, call);
      items = stream[Symbol.asyncIterator]();
      // Reading the first item before the headers turns an early failure into a proper error reply.
      first = await items.next();
    } catch (error) {
      grant.settle();
      throw classify(error);
    }
    let usage: Usage | undefined;
    const assembler = storage ? createCompletionAssembler() : undefined;
    const frames = chatStreamFrames(first, items, {
      classify,
      collect: assembler?.add,
      beforeDone:
        assembler &&
        (() => {
          const completion = assembler.completion();
          if (!keepServiceTier) delete completion.service_tier;
          return save(completion);
        }),
      onUsage: (reported) => (usage = x.usage = reported),
      includeUsage: request.stream_options?.include_usage === true,
      keepServiceTier,
      clientGone: () => x.abort.aborted,
      onError: (error) => ctx.logger.warn(`stream of ${entry.name} failed mid-way`, { request_id: x.requestId }, error),
    });
    return sseReply({ ...SSE_HEADERS, ...grant.headers }, settleAfterStream(frames, () => grant.settle(usage)));
  };
}
