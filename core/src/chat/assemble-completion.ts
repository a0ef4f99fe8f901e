/**
 * Builds the `chat.completion` a stream amounts to, from its chunks, so a streamed reply can be
 * stored like a JSON one. Used only for `store: true` streams, as the stream's `collect`: it gets
 * each chunk once the stream check (`chunk-check.ts`) has passed it, so every choice is an object
 * whose `index` is one of the request's choices; what is inside the choices is checked here.
 *
 * Nothing is made up: a choice without its finish reason makes the stream unfinished (502), and a
 * stream whose upstream reported no usage is stored without `usage`. A chunk that cannot be read
 * is the upstream's failure (502), never ours, and so is a tool call index past
 * `MAX_TOOL_CALL_INDEX` or an answer larger than `limit`: both sizes are the upstream's to choose.
 */
import { upstreamError, type ModelmuxError } from "../errors.ts";
import type { ChatChoice, ChatCompletion, ChatCompletionChunk, ChatCompletionWithoutUsage, FinishReason, ToolCall, Usage } from "../types/chat.ts";
import { unfinishedStream, unreadableEvent } from "./chunk-check.ts";

/**
 * The highest tool call index a chunk may name. A choice's tool calls are counted from 0, and no
 * model makes a thousand in one answer; a larger index is an unreadable chunk.
 */
export const MAX_TOOL_CALL_INDEX = 1024;

type Draft = {
  content: string;
  refusal: string;
  hasContent: boolean;
  /** By their index: an upstream may send them in any order, and an index says nothing of how many there are. */
  toolCalls: Map<number, ToolCall>;
  index: number;
  finish_reason: FinishReason | undefined;
  native_finish_reason: string | undefined;
};

type JsonRecord = Record<string, unknown>;

function isRecord(value: unknown): value is JsonRecord {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isToolCallIndex(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= MAX_TOOL_CALL_INDEX;
}

/**
 * Collects chunks as they pass; `completion()` gives the whole reply once the stream has ended.
 * `limit` bounds the text it keeps (content, refusals, tool names and arguments, in characters):
 * `server.upstream_body_limit`, as for a JSON reply.
 */
export function createCompletionAssembler(provider: string, limit: number) {
  const drafts = new Map<number, Draft>();
  let head: ChatCompletionChunk | undefined;
  let usage: Usage | undefined;
  let kept = 0;
  const unreadable = (): ModelmuxError => unreadableEvent(provider);

  /** `text` added to what is kept; throws 502 past `limit`. */
  function keep(text: string): string {
    kept += text.length;
    if (kept > limit) {
      throw upstreamError(
        `Provider '${provider}' sent a stream too long to store: its answer passed the limit of ${limit} characters (server.upstream_body_limit). Raise server.upstream_body_limit if its replies are this large.`,
      );
    }
    return text;
  }

  function addToolCalls(draft: Draft, deltas: unknown): void {
    if (deltas === undefined || deltas === null) return;
    if (!Array.isArray(deltas)) throw unreadable();
    for (const delta of deltas as unknown[]) {
      if (!isRecord(delta) || !isToolCallIndex(delta.index)) throw unreadable();
      let call = draft.toolCalls.get(delta.index);
      if (!call) draft.toolCalls.set(delta.index, (call = { id: "", type: "function", function: { name: "", arguments: "" } }));
      const fn = isRecord(delta.function) ? delta.function : {};
      if (typeof delta.id === "string" && delta.id) call.id = keep(delta.id);
      if (typeof fn.name === "string") call.function.name += keep(fn.name);
      if (typeof fn.arguments === "string") call.function.arguments += keep(fn.arguments);
    }
  }

  /** Adds one chunk that passed the stream check; throws 502 for what inside it cannot be read. */
  function add(chunk: ChatCompletionChunk): void {
    head ??= chunk;
    if (isRecord(chunk.usage)) usage = chunk.usage as unknown as Usage;
    for (const c of chunk.choices) {
      if (c.delta != null && !isRecord(c.delta)) throw unreadable();
      // The stream check let a missing index through only for a single choice: it is choice 0.
      const index = c.index ?? 0;
      let draft = drafts.get(index);
      if (!draft) {
        draft = { content: "", refusal: "", hasContent: false, toolCalls: new Map(), index, finish_reason: undefined, native_finish_reason: undefined };
        drafts.set(index, draft);
      }
      const delta: JsonRecord = isRecord(c.delta) ? c.delta : {};
      if (typeof delta.content === "string") {
        draft.content += keep(delta.content);
        draft.hasContent = true;
      }
      if (typeof delta.refusal === "string") draft.refusal += keep(delta.refusal);
      addToolCalls(draft, delta.tool_calls);
      if (typeof c.finish_reason === "string" && c.finish_reason) draft.finish_reason = c.finish_reason;
      if (typeof c.native_finish_reason === "string") draft.native_finish_reason = c.native_finish_reason;
    }
  }

  /** The whole reply; throws 502 when a choice never had its finish reason. */
  function completion(): ChatCompletion | ChatCompletionWithoutUsage {
    const sorted = [...drafts.values()].sort((a, b) => a.index - b.index);
    const finished = sorted.filter((d) => d.finish_reason !== undefined).length;
    if (sorted.length === 0 || finished < sorted.length) throw unfinishedStream(provider, finished, Math.max(1, sorted.length));
    const choices: ChatChoice[] = sorted.map((d) => {
      const toolCalls = [...d.toolCalls.entries()].sort((a, b) => a[0] - b[0]).map((entry) => entry[1]);
      return {
        index: d.index,
        finish_reason: d.finish_reason!,
        ...(d.native_finish_reason !== undefined && { native_finish_reason: d.native_finish_reason }),
        message: {
          role: "assistant",
          content: d.hasContent && (d.content !== "" || toolCalls.length === 0) ? d.content : null,
          ...(d.refusal && { refusal: d.refusal }),
          ...(toolCalls.length > 0 && { tool_calls: toolCalls }),
        },
      };
    });
    const top = { id: head?.id ?? "", object: "chat.completion" as const, created: head?.created ?? Math.floor(Date.now() / 1000), model: head?.model ?? "", choices };
    const tail = {
      ...(head?.service_tier != null && { service_tier: head.service_tier }),
      ...(head?.system_fingerprint != null && { system_fingerprint: head.system_fingerprint }),
    };
    return usage ? Object.assign({}, top, { usage }, tail) : Object.assign({}, top, tail);
  }

  return { add, completion };
}
