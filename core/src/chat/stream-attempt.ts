/**
 * One attempt of a chat stream: its provider's stream opened and read up to its first content
 * (`first-content.ts`: a failure before the client has any is retried or falls back, and
 * `first_token` bounds the wait), then relayed (`event-relay.ts`, a provider whose upstream speaks
 * the client's format) or framed (`stream-frames.ts`). A continuation (`continuation.ts`) is an
 * attempt too, on a request that ends with the text the client has, and it carries on what its
 * broken attempt kept (`SentSoFar`).
 */
import { createCompletionAssembler } from "./assemble-completion.ts";
import { choiceCount } from "./chunk-check.ts";
import { openEventRelay } from "./event-relay.ts";
import { toProviderRequest } from "./provider-request.ts";
import { openChatStreamFrames } from "./stream-frames.ts";
import { untilContent } from "./first-content.ts";
import { save, type ChatRequestState } from "./request-state.ts";
import { Transcript } from "./transcript.ts";
import { streamFailed } from "../server/stream-failure.ts";
import { toUpstreamError } from "../upstream/client.ts";
import type { CoreCall } from "../upstream/provider-call.ts";
import type { Target } from "../routing/types.ts";
import type { ChatCompletionChunk, ChatRequest, Usage } from "../types/chat.ts";

/** What the client of a stream has been sent, kept when a continuation may follow or the answer is stored. */
export interface SentSoFar {
  /** Set when a continuation may follow (`ChatRequestState.continuableUpTo`). */
  transcript: Transcript | undefined;
  /** Set for `store: true`: the completion the stream amounts to. */
  assembler: ReturnType<typeof createCompletionAssembler> | undefined;
  /** The `provider/model` the stored completion names: the one that began the answer. */
  model: string;
}

/** One attempt's stream, open, with the usage it reports once it ends. */
export interface OpenStream {
  frames: AsyncIterator<string>;
  usage: Usage | undefined;
  /** The error behind the error event the stream ended with, if it did. */
  failure: unknown;
  target: Target;
  sent: SentSoFar;
  /** A chunk read so far carried content (the chunk checks' `onContent`). */
  hasContent: boolean;
  /** Its first content is here: from now on the stream is the client's. */
  committed: boolean;
  /** Set on the client's first stream once a continuation took over; its `usage` is then every answering attempt's. */
  continued?: boolean;
}

/** The request's chunks go to the transcript and the assembler, whichever are kept. */
function collectorOf(sent: SentSoFar): ((chunk: ChatCompletionChunk) => void) | undefined {
  const { transcript, assembler } = sent;
  if (transcript && assembler) {
    return (chunk) => {
      assembler.add(chunk);
      transcript.add(chunk);
    };
  }
  return transcript?.add ?? assembler?.add;
}

/** Stores the completion the stream amounts to (`store: true`), before `[DONE]`. */
export function saveStreamed(chat: ChatRequestState, sent: SentSoFar): Promise<void> {
  const completion = sent.assembler!.completion();
  if (!chat.keepServiceTier) delete completion.service_tier;
  return save(chat, sent.model, completion);
}

/**
 * What both stream paths share: the client's choices (usage chunk, `service_tier`), storing the
 * assembled completion before `[DONE]` when `store: true`, and the usage for the access log. A
 * continuation's chunks are collected (and the answer stored) by `continued-frames.ts`, once they
 * are the client's.
 */
function streamOptions(chat: ChatRequestState, call: CoreCall, open: OpenStream, continuation: boolean) {
  const { ctx, x, keepServiceTier } = chat;
  const { entry } = open.target;
  const { sent } = open;
  return {
    provider: entry.provider,
    // The relay's (`event-relay.ts`): the errors of a body that stalls name it.
    timeoutMs: entry.timeoutMs,
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
    onContent: () => (open.hasContent = true),
    onError: (error: unknown) => {
      open.failure = error;
      // Before its first content the failure is the attempt's, retried or passed on (`first-content.ts`):
      // only a stream the client has is a failed stream.
      if (open.committed) streamFailed(ctx.logger, x, `stream of ${entry.name}`, error);
    },
    // Always both keys, unset or not: one shape of options object for every stream.
    collect: continuation ? undefined : collectorOf(sent),
    beforeDone: continuation || !sent.assembler ? undefined : () => saveStreamed(chat, sent),
  };
}

/**
 * One attempt: the provider's stream of `request`, read up to its first item to send.
 * @param carried what a continuation carries on from the attempt it continues; a first answer's attempt keeps its own
 */
export async function openStreamOn(chat: ChatRequestState, target: Target, call: CoreCall, request: ChatRequest, carried?: SentSoFar): Promise<OpenStream> {
  const { entry } = target;
  const sent: SentSoFar = carried ?? {
    transcript: chat.targets.indexOf(target) <= chat.continuableUpTo ? new Transcript() : undefined,
    assembler: chat.storage ? createCompletionAssembler(entry.provider, chat.ctx.upstreamBodyLimit) : undefined,
    model: entry.name,
  };
  const open: OpenStream = { frames: undefined!, usage: undefined, failure: undefined, target, sent, hasContent: false, committed: false };
  const options = streamOptions(chat, call, open, carried !== undefined);
  const providerRequest = toProviderRequest(request, entry.model);
  try {
    if (entry.instance.chatStreamEvents) {
      // Relayed in whole reads.
      const stream = await entry.instance.chatStreamEvents(providerRequest, call);
      open.frames = await openEventRelay(stream, options);
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
  const frames = untilContent(open.frames, open);
  open.frames = frames instanceof Promise ? await frames : frames;
  open.committed = true;
  return open;
}
