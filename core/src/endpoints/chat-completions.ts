/**
 * `POST /v1/chat/completions`: validate, route by model, check capabilities, call the provider,
 * reply with the normalised completion or its SSE stream.
 */
import type { H3Event } from "h3";
import type { AppContext } from "../app-context.ts";
import { assertChatCapabilities } from "../capabilities.ts";
import { chatStreamFrames } from "../chat/stream-frames.ts";
import { toProviderRequest } from "../chat/provider-request.ts";
import { createCompletionAssembler } from "../chat/assemble-completion.ts";
import { invalidRequest, storageFailed } from "../errors.ts";
import { toUpstreamError } from "../http-client.ts";
import type { ProviderCall } from "../plugin.ts";
import type { ChatCompletion, ChatStreamItem } from "../types/chat.ts";
import { readJsonBody } from "../utils/read-body.ts";
import { sendSse, SSE_HEADERS } from "../utils/sse-write.ts";

export function createChatCompletionHandler(ctx: AppContext) {
  return async function createChatCompletion(event: H3Event) {
    const request = ctx.validators.chat(await readJsonBody(event, ctx.bodyLimit));
    const entry = ctx.models.resolve(request.model);
    event.context.model = entry.name;
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
        ctx.logger.error("storing a completion failed", { request_id: event.context.requestId }, error);
        throw storageFailed(error);
      }
    };
    const signal = event.req.signal;
    const call: ProviderCall = { model: entry.model, signal, timeoutMs: entry.timeoutMs, requestId: event.context.requestId };
    const providerRequest = toProviderRequest(request, entry.model);
    const keepServiceTier = request.service_tier != null;
    const classify = (error: unknown) => toUpstreamError(error, entry.provider, entry.timeoutMs);

    if (!request.stream) {
      const completion: ChatCompletion = await entry.instance.chat(providerRequest, call).catch((error: unknown) => {
        throw classify(error);
      });
      if (!keepServiceTier) delete completion.service_tier;
      if (storage) await save(completion);
      return completion;
    }

    let items: AsyncIterator<ChatStreamItem>;
    let first: IteratorResult<ChatStreamItem>;
    try {
      items = (await entry.instance.chatStream(providerRequest, call))[Symbol.asyncIterator]();
      // Reading the first item before the headers turns an early failure into a proper error reply.
      first = await items.next();
    } catch (error) {
      throw classify(error);
    }
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
      includeUsage: request.stream_options?.include_usage === true,
      keepServiceTier,
      clientGone: () => signal.aborted,
      onError: (error) => ctx.logger.warn(`stream of ${entry.name} failed mid-way`, { request_id: event.context.requestId }, error),
    });
    return sendSse(event, { ...SSE_HEADERS, "x-request-id": event.context.requestId }, frames);
  };
}
