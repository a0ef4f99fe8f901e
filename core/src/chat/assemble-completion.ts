/**
 * Builds the `chat.completion` a stream amounts to, from its chunks, so a streamed reply can be
 * stored like a JSON one. Used only for `store: true` streams.
 *
 * Nothing is made up: a choice without its finish reason makes the stream unfinished (502), and a
 * stream whose upstream reported no usage is stored without `usage` (optional in the API's
 * completion object). A chunk that cannot be read is the upstream's failure (502), never ours.
 */
import type { ModelmuxError } from "../errors.ts";
import type { ChatChoice, ChatCompletion, ChatCompletionChunk, ChatStreamItem, FinishReason, ToolCall, Usage } from "../types/chat.ts";
import { findExcessNestingInText, MAX_UPSTREAM_DEPTH } from "../utils/json-nesting.ts";
import { isChunkObject, unfinishedStream, unreadableEvent } from "./chunk-check.ts";

type Draft = {
  content: string;
  refusal: string;
  hasContent: boolean;
  toolCalls: ToolCall[];
  index: number;
  finish_reason: FinishReason | undefined;
  native_finish_reason: string | undefined;
};

type JsonRecord = Record<string, unknown>;

function isRecord(value: unknown): value is JsonRecord {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isIndex(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 0;
}

/** Collects chunks as they pass; `completion()` gives the whole reply once the stream has ended. */
export function createCompletionAssembler(provider: string) {
  const drafts = new Map<number, Draft>();
  let head: ChatCompletionChunk | undefined;
  let usage: Usage | undefined;
  const unreadable = (): ModelmuxError => unreadableEvent(provider);

  function parse(item: ChatStreamItem): ChatCompletionChunk {
    if (typeof item !== "string") return item;
    // Relayed as text, but stored as a value: one nested too deeply would overflow the storage's serialisation.
    if (findExcessNestingInText(item, MAX_UPSTREAM_DEPTH) !== undefined) throw unreadable();
    let value: unknown;
    try {
      value = JSON.parse(item);
    } catch {
      throw unreadable();
    }
    if (!isChunkObject(value)) throw unreadable();
    return value;
  }

  function addToolCalls(draft: Draft, deltas: unknown): void {
    if (deltas === undefined || deltas === null) return;
    if (!Array.isArray(deltas)) throw unreadable();
    for (const delta of deltas as unknown[]) {
      if (!isRecord(delta) || !isIndex(delta.index)) throw unreadable();
      const call = (draft.toolCalls[delta.index] ??= { id: "", type: "function", function: { name: "", arguments: "" } });
      const fn = isRecord(delta.function) ? delta.function : {};
      if (typeof delta.id === "string" && delta.id) call.id = delta.id;
      if (typeof fn.name === "string") call.function.name += fn.name;
      if (typeof fn.arguments === "string") call.function.arguments += fn.arguments;
    }
  }

  function add(item: ChatStreamItem): void {
    const chunk = parse(item);
    head ??= chunk;
    if (isRecord(chunk.usage)) usage = chunk.usage as unknown as Usage;
    for (const c of chunk.choices as unknown[]) {
      if (!isRecord(c) || !isIndex(c.index) || (c.delta != null && !isRecord(c.delta))) throw unreadable();
      let draft = drafts.get(c.index);
      if (!draft) {
        draft = { content: "", refusal: "", hasContent: false, toolCalls: [], index: c.index, finish_reason: undefined, native_finish_reason: undefined };
        drafts.set(c.index, draft);
      }
      const delta: JsonRecord = isRecord(c.delta) ? c.delta : {};
      if (typeof delta.content === "string") {
        draft.content += delta.content;
        draft.hasContent = true;
      }
      if (typeof delta.refusal === "string") draft.refusal += delta.refusal;
      addToolCalls(draft, delta.tool_calls);
      if (typeof c.finish_reason === "string" && c.finish_reason) draft.finish_reason = c.finish_reason as FinishReason;
      if (typeof c.native_finish_reason === "string") draft.native_finish_reason = c.native_finish_reason;
    }
  }

  /** The whole reply; throws 502 when a choice never had its finish reason. */
  function completion(): ChatCompletion {
    const sorted = [...drafts.values()].sort((a, b) => a.index - b.index);
    const finished = sorted.filter((d) => d.finish_reason !== undefined).length;
    if (sorted.length === 0 || finished < sorted.length) throw unfinishedStream(provider, finished, Math.max(1, sorted.length));
    const choices: ChatChoice[] = sorted.map((d) => ({
      index: d.index,
      finish_reason: d.finish_reason!,
      ...(d.native_finish_reason !== undefined && { native_finish_reason: d.native_finish_reason }),
      message: {
        role: "assistant",
        content: d.hasContent && (d.content !== "" || d.toolCalls.length === 0) ? d.content : null,
        ...(d.refusal && { refusal: d.refusal }),
        ...(d.toolCalls.length > 0 && { tool_calls: d.toolCalls.filter(Boolean) }),
      },
    }));
    return {
      id: head?.id ?? "",
      object: "chat.completion",
      created: head?.created ?? Math.floor(Date.now() / 1000),
      model: head?.model ?? "",
      choices,
      ...(usage && { usage }),
      ...(head?.service_tier != null && { service_tier: head.service_tier }),
      ...(head?.system_fingerprint != null && { system_fingerprint: head.system_fingerprint }),
    };
  }

  return { add, completion };
}
