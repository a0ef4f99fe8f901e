/**
 * Builds the `chat.completion` a stream amounts to, from its chunks, so a streamed reply can be
 * stored like a JSON one. Used only for `store: true` streams.
 */
import type { ChatChoice, ChatCompletion, ChatCompletionChunk, ChatStreamItem, ToolCall, Usage } from "../types/chat.ts";

type Draft = { content: string; refusal: string; hasContent: boolean; toolCalls: ToolCall[]; choice: Omit<ChatChoice, "message"> };

/** Collects chunks as they pass; `completion()` gives the whole reply once the stream has ended. */
export function createCompletionAssembler() {
  const drafts = new Map<number, Draft>();
  let head: ChatCompletionChunk | undefined;
  let usage: Usage | undefined;

  function add(item: ChatStreamItem): void {
    const chunk = typeof item === "string" ? (JSON.parse(item) as ChatCompletionChunk) : item;
    head ??= chunk;
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      let draft = drafts.get(c.index);
      if (!draft) {
        draft = { content: "", refusal: "", hasContent: false, toolCalls: [], choice: { index: c.index, finish_reason: "stop" } };
        drafts.set(c.index, draft);
      }
      if (typeof c.delta.content === "string") {
        draft.content += c.delta.content;
        draft.hasContent = true;
      }
      if (c.delta.refusal) draft.refusal += c.delta.refusal;
      for (const delta of c.delta.tool_calls ?? []) {
        const call = (draft.toolCalls[delta.index] ??= { id: "", type: "function", function: { name: "", arguments: "" } });
        if (delta.id) call.id = delta.id;
        if (delta.function?.name) call.function.name += delta.function.name;
        if (delta.function?.arguments) call.function.arguments += delta.function.arguments;
      }
      if (c.finish_reason) draft.choice.finish_reason = c.finish_reason;
      if (c.native_finish_reason) draft.choice.native_finish_reason = c.native_finish_reason;
    }
  }

  function completion(): ChatCompletion {
    const choices: ChatChoice[] = [...drafts.values()]
      .sort((a, b) => a.choice.index - b.choice.index)
      .map((d) => ({
        ...d.choice,
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
      usage: usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
      ...(head?.service_tier != null && { service_tier: head.service_tier }),
      ...(head?.system_fingerprint != null && { system_fingerprint: head.system_fingerprint }),
    };
  }

  return { add, completion };
}
