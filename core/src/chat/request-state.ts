/**
 * A chat completion request as both reply paths (`endpoint.ts` JSON, `stream-reply.ts` SSE) see
 * it, and storing its answer when `store: true`.
 */
import type { AppContext } from "../app-context.ts";
import { storageFailed, type ModelmuxError } from "../errors.ts";
import type { Storage } from "../plugin.ts";
import type { Target } from "../routing/types.ts";
import { completionOwnerOf } from "../server/auth/authenticate.ts";
import type { Exchange } from "../server/exchange.ts";
import type { ChatCompletion, ChatCompletionWithoutUsage, ChatRequest } from "../types/chat.ts";

/** What both reply paths need of a request. */
export interface ChatRequestState {
  ctx: AppContext;
  x: Exchange;
  request: ChatRequest;
  targets: readonly Target[];
  /** Why `target` cannot serve the request (its capabilities); undefined when it can. */
  refusal(target: Target): ModelmuxError | undefined;
  /** Set when `store: true`. */
  storage: Storage | undefined;
  /** The client set `service_tier`: replies keep it (docs/interface.md, "What the router changes"). */
  keepServiceTier: boolean;
  /**
   * Streams: the index in `targets` of the last target that can continue a broken answer (the
   * `prefill` capability); -1 when none can or the request asks for more than one choice.
   */
  continuableUpTo: number;
}

/**
 * Stores the finished reply under the caller's app (only that app sees it), with the model that
 * answered; the client hears of success only once it is stored.
 */
export async function save(chat: ChatRequestState, modelName: string, completion: ChatCompletion | ChatCompletionWithoutUsage): Promise<void> {
  const { request } = chat;
  try {
    await chat.storage!.saveCompletion({
      owner: completionOwnerOf(chat.x.principal),
      completion,
      messages: request.messages,
      model: modelName,
      metadata: request.metadata ?? {},
      createdAt: Date.now(),
    });
  } catch (error) {
    chat.ctx.logger.error("storing a completion failed", { request_id: chat.x.requestId }, error);
    throw storageFailed(error);
  }
}
