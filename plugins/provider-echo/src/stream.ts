/**
 * Turns a reply plan into `chat.completion.chunk` objects, the way OpenAI streams: per choice a role
 * chunk, the content (or the tool call's arguments) in pieces, a chunk with the finish reason; then
 * one usage chunk with no choices.
 */
import type { ChatChunkChoice, ChatCompletionChunk } from "@modelmux/core";
import { pieceSize } from "./bounds.ts";
import { splitChars } from "./chars.ts";
import type { ReplyPlan } from "./reply.ts";
import { serviceTierField, type ReplyMeta } from "./response.ts";

export interface StreamOptions {
  /** Characters (code points) per content or arguments piece; more for a long text (`bounds.ts`). */
  chunkSize: number;
  /** Pause between two chunks, in ms. */
  delayMs: number;
  /** Ends the stream, and any pause, when aborted. */
  signal: AbortSignal;
}

/**
 * Splits on code points, so a piece never ends inside a surrogate pair: pieces of `chunkSize`, or
 * larger ones when the text would otherwise make more than its share of `MAX_STREAM_PIECES`.
 */
function pieces(text: string, chunkSize: number, choices: number): string[] {
  return splitChars(text, pieceSize(text.length, chunkSize, choices));
}

/**
 * Waits `ms`, or rejects with the signal's reason as soon as it aborts. Clears its timer either way:
 * a client that disconnects from a slow demo stream must not leave timers behind.
 */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** The chunk choices of one choice index, in order, without the envelope. */
function choiceDeltas(plan: ReplyPlan, index: number, chunkSize: number): ChatChunkChoice[] {
  const call = plan.toolCall;
  const deltas: ChatChunkChoice[] = [];
  if (call) {
    // OpenAI's first tool-call chunk carries the role, the call's id and name, and no arguments yet.
    const head = { index: 0, id: call.id, type: "function" as const, function: { name: call.function.name, arguments: "" } };
    deltas.push({ index, delta: { role: "assistant", content: null, tool_calls: [head] }, finish_reason: null });
    for (const piece of pieces(call.function.arguments, chunkSize, plan.n)) {
      deltas.push({ index, delta: { tool_calls: [{ index: 0, function: { arguments: piece } }] }, finish_reason: null });
    }
  } else {
    deltas.push({ index, delta: { role: "assistant", content: "" }, finish_reason: null });
    for (const piece of pieces(plan.content ?? "", chunkSize, plan.n)) deltas.push({ index, delta: { content: piece }, finish_reason: null });
  }
  deltas.push({ index, delta: {}, finish_reason: plan.finishReason });
  return deltas;
}

/**
 * Streams `plan` as chunk objects, all with the same `id` and `created`. Pauses `delayMs` between
 * chunks (not before the first); throws the abort reason as soon as `signal` aborts.
 */
export async function* streamReply(plan: ReplyPlan, meta: ReplyMeta, options: StreamOptions): AsyncGenerator<ChatCompletionChunk> {
  const { chunkSize, delayMs, signal } = options;
  const envelope = (choices: ChatChunkChoice[]): ChatCompletionChunk => ({
    id: meta.id,
    object: "chat.completion.chunk",
    created: meta.created,
    model: meta.model,
    choices,
    ...serviceTierField(meta),
  });
  const choices = Array.from({ length: plan.n }, (_, index) => choiceDeltas(plan, index, chunkSize)).flat();
  const chunks = [...choices.map((choice) => envelope([choice])), { ...envelope([]), usage: { ...plan.usage } }];
  for (const [i, chunk] of chunks.entries()) {
    if (i > 0 && delayMs > 0) await sleep(delayMs, signal);
    signal.throwIfAborted();
    yield chunk;
  }
}
