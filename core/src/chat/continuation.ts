/**
 * Stream continuation (docs/interface.md, "Stream continuation"): when a chat stream breaks after
 * the client has some of the answer (cut, `idle`, an unreadable event, an error event), a target
 * with the `prefill` capability is asked to continue it: the original request, plus the text so
 * far (without its trailing whitespace) as a final assistant message, with `call.continuation` set.
 * Its stream is relayed into the client's (`continued-frames.ts`): same `id`, no repeated or
 * missing text, one finish reason, usage summed. A continuation that breaks may be continued too.
 *
 * Which targets: the broken one again when its failure is worth a retry (an error event such as
 * `overloaded`), then the request's targets after it, each with its retries, circuit and provider
 * limit (`routing/routed-call.ts`; the app's and developer's limits counted the request already).
 * A target that refuses (a 4xx, a prefill it does not take) passes it on. Text only: an answer
 * with a tool call, a refusal or audio, or of more than one choice, ends with its error event, as
 * does one with no target left.
 */
import { ModelmuxError } from "../errors.ts";
import { tokenReservation, type RateLimitGrant } from "../rate-limit/acquire.ts";
import { classifyFailure, isAbortError, passToNextTarget } from "../routing/failure.ts";
import { routeRequest } from "../routing/routed-call.ts";
import { BROKE_MID_STREAM, type AttemptRecord, type Target } from "../routing/types.ts";
import { streamFailed } from "../server/stream-failure.ts";
import { DONE_FRAME, chatErrorFrame } from "../sse/tail.ts";
import type { ChatRequest, Usage } from "../types/chat.ts";
import { ContinuedFrames } from "./continued-frames.ts";
import type { ChatRequestState } from "./request-state.ts";
import { openStreamOn, saveStreamed, type OpenStream } from "./stream-attempt.ts";
import { addUsage } from "./transcript.ts";

/** A continuation under way: its stream, its grant, and how its frames are rewritten. */
interface Continuing {
  open: OpenStream;
  grant: RateLimitGrant;
  rewrite: ContinuedFrames;
}

/**
 * The client's frames of a stream whose broken answer may be continued; `first.frames` as they
 * are when it may not. `first.usage` ends as the usage of every attempt that answered.
 */
export function withContinuation(chat: ChatRequestState, first: OpenStream): AsyncIterator<string> {
  if (first.sent.transcript === undefined) return first.frames;
  return new ContinuableFrames(chat, first);
}

/**
 * The first stream's frames, passed on as they come while it holds (most streams: one `then` a
 * frame); from its break on, `continuedStream` takes over with the break's error event.
 */
class ContinuableFrames implements AsyncIterator<string> {
  private continued: AsyncGenerator<string, void, undefined> | undefined;
  /** `return()` was called: a read still pending when it was starts no continuation. */
  private released = false;

  constructor(
    private readonly chat: ChatRequestState,
    private readonly first: OpenStream,
  ) {}

  next(): Promise<IteratorResult<string>> {
    if (this.continued !== undefined) return this.continued.next();
    return this.first.frames.next().then(this.took);
  }

  async return(): Promise<IteratorResult<string>> {
    this.released = true;
    // A generator let go of before its first read never runs its `finally`: the first stream is let go of here too.
    if (this.continued !== undefined) await this.continued.return();
    await this.first.frames.return?.();
    return { done: true, value: undefined };
  }

  private readonly took = (read: IteratorResult<string>): Promise<IteratorResult<string>> | IteratorResult<string> => {
    if (read.done || this.first.failure === undefined) return read;
    // Let go of while this read was pending: nobody reads on, and nothing is to be continued.
    if (this.released) return { done: true, value: undefined };
    // The attempt broke: `read.value` is its error event, sent only if no continuation takes over.
    this.continued = continuedStream(this.chat, this.first, read.value);
    return this.continued.next();
  };
}

/** From the first stream's break on: its continuations, or its error event when none takes over. */
async function* continuedStream(chat: ChatRequestState, first: OpenStream, errorEvent: string): AsyncGenerator<string, void, undefined> {
  // The read that broke, taken up first.
  let broken: IteratorResult<string> | undefined = { done: false, value: errorEvent };
  let current = first;
  let continuing: Continuing | undefined;
  let usage: Usage | undefined;
  try {
    for (;;) {
      const read = broken ?? (await current.frames.next());
      broken = undefined;
      if (read.done) break;
      if (current.failure === undefined) {
        const frame = continuing ? await continuedFrame(chat, continuing, read.value) : read.value;
        if (frame !== "") yield frame;
        if (frame === DONE_FRAME) break;
        continue;
      }
      // The attempt broke: `read.value` is its error event, sent only if no continuation takes over.
      const next = await continueAfter(chat, current, addUsage(usage, current.usage));
      if (next === undefined) {
        yield read.value;
        break;
      }
      usage = addUsage(usage, current.usage);
      await end(current, continuing);
      current = next.open;
      continuing = next;
      first.continued = true;
    }
  } finally {
    usage = addUsage(usage, current.usage);
    first.usage = usage;
    if (usage !== undefined) chat.x.usage = usage;
    await end(current, continuing);
  }
}

/** Lets go of a stream once it is done with; a continuation's grant is settled with its usage. */
async function end(open: OpenStream, continuing: Continuing | undefined): Promise<void> {
  try {
    await open.frames.return?.();
  } finally {
    if (continuing?.open === open) continuing.grant.settle(open.usage);
  }
}

/** A continuation's frame for the client; before `[DONE]` the answer is stored when asked. */
async function continuedFrame(chat: ChatRequestState, continuing: Continuing, frame: string): Promise<string> {
  try {
    if (frame === DONE_FRAME) {
      if (continuing.open.sent.assembler) await saveStreamed(chat, continuing.open.sent);
      return frame;
    }
    return continuing.rewrite.rewrite(frame);
  } catch (error) {
    // Stored or collected, the answer failed after all: the stream's one error event.
    streamFailed(chat.ctx.logger, chat.x, `stream continued by ${continuing.open.target.entry.name}`, error);
    return chatErrorFrame(error);
  }
}

/** A continuation's refusal is that target's, not the request's: the next one may take it. */
function passOnRefusal(error: unknown): never {
  if (error instanceof ModelmuxError && !isAbortError(error) && classifyFailure(error).outcome === "final") throw passToNextTarget(error);
  throw error;
}

/**
 * Opens the continuation of `broken`'s answer on the targets that may take it; undefined when
 * none may or every one failed (the client then gets `broken`'s error event).
 */
async function continueAfter(chat: ChatRequestState, broken: OpenStream, usageBefore: Usage | undefined): Promise<Continuing | undefined> {
  const { ctx, x } = chat;
  const transcript = broken.sent.transcript!;
  if (!transcript.continuable || x.abort.aborted) return undefined;
  const failure = classifyFailure(broken.failure);
  // The reply had begun: a connection that broke is not tried again on the same target (`routing/routed-call.ts`).
  if (failure.outcome === "retryable" && failure.status === undefined) Object.assign(failure, { outcome: "next", reason: "reply broke off" });
  markBroken(x.attempts, broken.target, failure.outcome, failure.status, failure.reason);
  if (failure.outcome === "retryable" || failure.outcome === "timeout") ctx.breakers.failure(broken.target);
  const at = chat.targets.indexOf(broken.target);
  const targets = chat.targets.slice(failure.outcome === "retryable" ? at : at + 1).filter((target) => target.entry.capabilities.prefill);
  if (targets.length === 0) return undefined;

  const prefill = transcript.text.trimEnd();
  const request: ChatRequest = { ...chat.request, messages: [...chat.request.messages, { role: "assistant", content: prefill }] };
  const attemptsBefore = x.attempts ?? [];
  const model = x.model;
  x.attempts = undefined;
  try {
    const routed = await routeRequest(ctx, x, {
      targets,
      skip: chat.refusal,
      reserve: tokenReservation(chat.request),
      firstToken: true,
      providerOnly: true,
      run: (target, call) => {
        call.continuation = true;
        return openStreamOn(chat, target, call, request, broken.sent).catch(passOnRefusal);
      },
      dispose: (open) => void open.frames.return?.(),
    });
    ctx.logger.info(`stream of ${broken.target.entry.name} continued by ${routed.target.entry.name}`, { request_id: x.requestId });
    // The client will not get the break's error event.
    x.failure = undefined;
    return { open: routed.value, grant: routed.grant, rewrite: new ContinuedFrames(broken.sent, transcript.text.slice(prefill.length), usageBefore) };
  } catch (error) {
    if (!isAbortError(error)) ctx.logger.warn(`stream of ${broken.target.entry.name} could not be continued: ${error instanceof Error ? error.message : String(error)}`, { request_id: x.requestId });
    return undefined;
  } finally {
    x.attempts = [...attemptsBefore, ...(x.attempts ?? [])];
    x.model = model;
  }
}

/** The record of the attempt whose stream broke says so (it read "ok" once its content came). */
function markBroken(records: readonly AttemptRecord[] | undefined, target: Target, outcome: AttemptRecord["outcome"], status: number | undefined, reason: string): void {
  if (records === undefined) return;
  for (let i = records.length - 1; i >= 0; i--) {
    const record = records[i]!;
    if (record.target !== target.entry.name || record.outcome !== "ok") continue;
    record.outcome = outcome;
    if (status !== undefined) record.status = status;
    record.reason = `${BROKE_MID_STREAM}: ${reason}`;
    return;
  }
}
