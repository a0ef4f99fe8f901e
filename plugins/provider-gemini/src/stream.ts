/**
 * A Gemini SSE reply (`streamGenerateContent?alt=sse`) -> `chat.completion.chunk` objects. Each
 * `data:` event is a whole `GenerateContentResponse` carrying the next piece of each candidate;
 * there is no `[DONE]`, the body just ends. The translation (`createChunkMapper`) is pure and
 * stateful per stream; `readGeminiStreamBatches` only adds the reading (one batch of chunks per
 * upstream read, what the plugin's `chatStream` hands the core) and the error handling.
 */
import {
  readSseEventBatches,
  upstreamError,
  type ChatChunkChoice,
  type ChatCompletionChunk,
  type EventSourceMessage,
  type HttpBody,
  type ToolCallDelta,
  type Usage,
  toBodyReadError,
} from "@modelmux/core";
import { toStreamError } from "./errors.ts";
import { blockedChoices, completionId, createdAt, mapFinishReason, mapUsage, readCandidate, toolCallId } from "./response.ts";
import type { GeminiResponse } from "./wire.ts";

/** What the mapper needs besides the events. */
export interface ChunkMapperContext {
  /** The provider's configured name, for errors. */
  provider: string;
  /** The bare model requested, used when the upstream sends no `modelVersion`. */
  model: string;
  /** The configured API key, removed from any error message. */
  secret?: string;
  /** How many choices the request asked for (`choiceCount(request)`); a blocked prompt ends each of them. Default 1. */
  choices?: number;
}

/** Turns a stream's events into chunks, one event at a time. */
export interface ChunkMapper {
  /**
   * The chunks for one parsed event. Throws the mapped error for an error event. The event that
   * finishes the last candidate (or blocks the prompt) is followed by the usage chunk
   * (`choices: []`) when it carries `usageMetadata`, as Gemini's last event does: the core then
   * has the whole stream, without waiting for the body's end.
   */
  map(event: unknown): ChatCompletionChunk[];
  /**
   * The closing chunks once the body has ended: the usage chunk when the upstream reported usage
   * and `map` did not already send it. Throws 502 when the stream ended before every candidate
   * finished.
   */
  end(): ChatCompletionChunk[];
}

interface CandidateState {
  roleSent: boolean;
  toolCalls: number;
  finished: boolean;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Creates the mapper for one stream. Every chunk carries the id, `created` and model of the first
 * event. A candidate's first chunk has `delta.role`; text parts become content deltas (thoughts are
 * left out); a function call arrives whole, so it becomes one tool-call delta with its index, id,
 * name and full arguments; a `finishReason` becomes a chunk of its own with `native_finish_reason`.
 * A prompt blocked before generation is a `content_filter` chunk for each choice asked for: the core
 * needs each choice to finish.
 */
export function createChunkMapper(context: ChunkMapperContext): ChunkMapper {
  const candidates = new Map<number, CandidateState>();
  let head: Pick<ChatCompletionChunk, "id" | "object" | "created" | "model"> | undefined;
  let responseId = "";
  let usage: Usage | undefined;
  let blocked = false;
  /** Candidates that have their finish reason. */
  let finishes = 0;
  let usageSent = false;
  const choices = context.choices ?? 1;

  const chunk = (choices: ChatChunkChoice[], extra: Partial<ChatCompletionChunk> = {}): ChatCompletionChunk => ({ ...head!, choices, ...extra });

  return {
    map(event) {
      if (!isObject(event)) throw upstreamError(`${context.provider}: a stream event is not a GenerateContentResponse.`);
      if (event.error !== undefined) throw toStreamError(context.provider, event, context.secret);
      const reply = event as unknown as GeminiResponse;
      if (!head) {
        responseId = typeof reply.responseId === "string" ? reply.responseId : "";
        const model = typeof reply.modelVersion === "string" && reply.modelVersion ? reply.modelVersion : context.model;
        head = { id: completionId(responseId), object: "chat.completion.chunk", created: createdAt(reply.createTime), model };
      }
      const reported = isObject(reply.usageMetadata);
      if (reported) usage = mapUsage(reply.usageMetadata!);

      const out: ChatCompletionChunk[] = [];
      const list = Array.isArray(reply.candidates) ? reply.candidates.filter((candidate): boolean => isObject(candidate)) : [];
      if (list.length === 0 && reply.promptFeedback?.blockReason && !blocked) {
        blocked = true;
        const reason = String(reply.promptFeedback.blockReason);
        for (const choice of blockedChoices(context.choices, (index): ChatChunkChoice => ({ index, delta: { role: "assistant", content: null }, finish_reason: "content_filter", native_finish_reason: reason }))) {
          out.push(chunk([choice]));
        }
      }
      list.forEach((candidate, position) => {
        const index = typeof candidate.index === "number" ? candidate.index : position;
        let state = candidates.get(index);
        if (!state) candidates.set(index, (state = { roleSent: false, toolCalls: 0, finished: false }));
        const { text, calls } = readCandidate(candidate);
        const delta: ChatChunkChoice["delta"] = {};
        if (text) delta.content = text;
        if (calls.length > 0) {
          delta.tool_calls = calls.map((call): ToolCallDelta => {
            const ordinal = state.toolCalls++;
            const id = call.id || toolCallId(responseId, index, ordinal, call);
            return { index: ordinal, id, type: "function", function: { name: call.name ?? "", arguments: JSON.stringify(call.args ?? {}) } };
          });
        }
        const hasDelta = delta.content !== undefined || delta.tool_calls !== undefined;
        const finishing = typeof candidate.finishReason === "string" && !state.finished;
        // The role goes with the candidate's first chunk, whichever kind that is.
        const sendRole = !state.roleSent && (hasDelta || finishing);
        if (sendRole) state.roleSent = true;
        if (hasDelta) out.push(chunk([{ index, delta: sendRole ? { role: "assistant", ...delta } : delta, finish_reason: null }]));
        if (finishing) {
          state.finished = true;
          finishes++;
          const finish = mapFinishReason(candidate.finishReason, state.toolCalls > 0);
          out.push(chunk([{ index, delta: sendRole && !hasDelta ? { role: "assistant" } : {}, ...finish }]));
        }
      });
      // The answer is whole, and this event's usage is the final one.
      if (reported && !usageSent && (blocked || finishes >= choices)) {
        usageSent = true;
        out.push(chunk([], { usage }));
      }
      return out;
    },

    end() {
      if (!head) throw upstreamError(`${context.provider}: the reply to a streamed request carried no events.`);
      const unfinished = [...candidates.values()].some((state) => !state.finished);
      if (unfinished || (candidates.size === 0 && !blocked)) throw upstreamError(`${context.provider}: the stream ended before the reply was complete.`);
      return usage && !usageSent ? [chunk([], { usage })] : [];
    },
  };
}

/** The options of `readGeminiStreamBatches`. */
export interface ReadStreamOptions extends ChunkMapperContext {
  /** The call's timeout, for the 504 of a stalled body. */
  timeoutMs: number;
}

/** An event's payload. Throws 502 for data that is not JSON. */
function parseEvent(data: string, provider: string): unknown {
  try {
    return JSON.parse(data);
  } catch (error) {
    throw upstreamError(`${provider}: a stream event is not valid JSON.`, error);
  }
}

/**
 * Maps one read's events into `items`. The error that ends the stream (an error event, an event
 * that is not JSON or not a response) is returned, not thrown: the chunks before it are sent first.
 */
function mapRead(events: readonly EventSourceMessage[], mapper: ChunkMapper, items: ChatCompletionChunk[], provider: string): unknown {
  try {
    for (let i = 0; i < events.length; i++) {
      const { data } = events[i]!;
      if (!data.trim()) continue;
      const chunks = mapper.map(parseEvent(data, provider));
      for (let j = 0; j < chunks.length; j++) items.push(chunks[j]!);
    }
  } catch (error) {
    return error;
  }
  return undefined;
}

/**
 * Yields the chunks of a Gemini SSE body, one batch per upstream read (what `chatStream` hands
 * the core; never an empty batch), the usage chunk with the event that finishes the answer
 * (or, when that event has no usage, once the body has ended). Throws the
 * mapped error for an error event, 502 for an event that is not JSON, each after a batch of the
 * chunks before it; 502 for a body that breaks off or ends early, 504 for a body that stalls past
 * the timeout.
 */
export async function* readGeminiStreamBatches(body: HttpBody, options: ReadStreamOptions): AsyncGenerator<ChatCompletionChunk[]> {
  const mapper = createChunkMapper(options);
  try {
    for await (const events of readSseEventBatches(body)) {
      const items: ChatCompletionChunk[] = [];
      const failure = mapRead(events, mapper, items, options.provider);
      if (items.length > 0) yield items;
      if (failure !== undefined) throw failure;
    }
  } catch (error) {
    throw toBodyReadError(error, options.provider, options.timeoutMs);
  }
  const last = mapper.end();
  if (last.length > 0) yield last;
}
