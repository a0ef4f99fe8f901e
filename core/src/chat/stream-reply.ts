/**
 * The SSE reply of a chat completion: each attempt opens its provider's stream and reads it up to
 * its first content (`first-content.ts`: a failure before the client has any is retried or falls
 * back, and `first_token` bounds the wait), then the stream is relayed (`event-relay.ts`, a provider whose
 * upstream speaks the client's format) or framed (`stream-frames.ts`).
 */
import { createCompletionAssembler } from "./assemble-completion.ts";
import { choiceCount } from "./chunk-check.ts";
import { openEventRelay } from "./event-relay.ts";
import { toProviderRequest } from "./provider-request.ts";
import { openChatStreamFrames } from "./stream-frames.ts";
import { untilContent } from "./first-content.ts";
import { save, type ChatRequestState } from "./request-state.ts";
import { toUpstreamError } from "../upstream/client.ts";
import type { CoreCall } from "../upstream/provider-call.ts";
import { settleAfterStream, tokenReservation } from "../rate-limit/acquire.ts";
import { routeRequest } from "../routing/routed-call.ts";
import type { Target } from "../routing/types.ts";
import { sseReply, type Reply } from "../server/reply.ts";
import { SSE_HEADERS } from "../sse/write.ts";
import type { Usage } from "../types/chat.ts";

/** One attempt's stream, open, with the usage it reports once it ends. */
interface OpenStream {
  frames: AsyncIterator<string>;
  usage: Usage | undefined;
  /** The error behind the error event the stream ended with, if it did. */
  failure: unknown;
}

/**
 * What both stream paths share: the client's choices (usage chunk, `service_tier`), storing the
 * assembled completion before `[DONE]` when `store: true`, and the usage for the access log.
 */
function streamOptions(chat: ChatRequestState, target: Target, call: CoreCall, open: OpenStream) {
  const { ctx, x, keepServiceTier } = chat;
  const { entry } = target;
  const assembler = chat.storage ? createCompletionAssembler(entry.provider, ctx.upstreamBodyLimit) : undefined;
  return {
    provider: entry.provider,
    // Each choice must finish for the answer to be complete (`chat/chunk-check.ts`).
    choices: choiceCount(chat.request),
    classify: (error: unknown) => toUpstreamError(error, entry.provider, entry.timeoutMs),
    includeUsage: chat.request.stream_options?.include_usage === true,
    keepServiceTier,
    // The exchange's hook: the call's own also fires when the core cancels the call (`provider-call.ts`).
    clientGone: () => x.abort.aborted,
    // For the framed path (`chat/stream-frames.ts`), which cancels the call it stops reading early.
    call,
    onUsage: (reported: Usage) => (open.usage = x.usage = reported),
    onError: (error: unknown) => {
      open.failure = error;
      ctx.logger.warn(`stream of ${entry.name} failed mid-way`, { request_id: x.requestId }, error);
    },
    ...(assembler && {
      collect: assembler.add,
      beforeDone: () => {
        const completion = assembler.completion();
        if (!keepServiceTier) delete completion.service_tier;
        return save(chat, entry.name, completion);
      },
    }),
  };
}

/** One attempt: the provider's stream, read up to its first item to send. */
async function openStreamOn(chat: ChatRequestState, target: Target, call: CoreCall): Promise<OpenStream> {
  const { entry } = target;
  const open: OpenStream = { frames: undefined!, usage: undefined, failure: undefined };
  const options = streamOptions(chat, target, call, open);
  const providerRequest = toProviderRequest(chat.request, entry.model);
  try {
    if (entry.instance.chatStreamEvents) {
      // Relayed in whole reads.
      const stream = await entry.instance.chatStreamEvents(providerRequest, call);
      open.frames = await openEventRelay(stream, { ...options, timeoutMs: entry.timeoutMs });
    } else {
      // The stream's whole-wait deadline ends at its first chunk to send, not at its first event (a ping).
      call.holdDeadlines();
      // A provider without `chatStreamEvents` has `chatStream`: checked when it loaded (`plugins/provider-contract-check.ts`).
      const stream = await entry.instance.chatStream!(providerRequest, call);
      // The first item is read before the headers: an early failure becomes a proper error reply.
      open.frames = await openChatStreamFrames(stream[Symbol.asyncIterator](), options);
    }
  } catch (error) {
    throw options.classify(error);
  }
  // Nothing reaches the client before content: a failure until then is this attempt's, not the reply's.
  open.frames = await untilContent(open.frames, () => open.failure);
  return open;
}

export async function streamReply(chat: ChatRequestState): Promise<Reply> {
  const routed = await routeRequest(chat.ctx, chat.x, {
    targets: chat.targets,
    skip: chat.refusal,
    reserve: tokenReservation(chat.request),
    firstToken: true,
    run: (target, call) => openStreamOn(chat, target, call),
    dispose: (open) => void open.frames.return?.(),
  });
  const { value: open, grant } = routed;
  // The grant is settled with the stream's usage once it ends, or is abandoned.
  return sseReply({ ...SSE_HEADERS, ...routed.headers }, settleAfterStream(open.frames, () => grant.settle(open.usage)));
}
