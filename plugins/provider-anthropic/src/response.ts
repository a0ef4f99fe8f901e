/**
 * Anthropic's JSON `Message` reply -> the normalised `chat.completion`. Pure functions; the stream
 * translator (`stream.ts`) shares the stop-reason and usage mappings.
 */
import { parseUpstreamJson, upstreamError, type ChatCompletion, type FinishReason, type ToolCall, type Usage } from "@modelmux/core";
import type { AnthropicUsage } from "./wire.ts";

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const toInt = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.floor(value) : 0);

/** Anthropic's `stop_reason` -> OpenAI's `finish_reason`. */
export const STOP_REASONS: Readonly<Record<string, FinishReason>> = Object.freeze({
  end_turn: "stop",
  stop_sequence: "stop",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  tool_use: "tool_calls",
  refusal: "content_filter",
  // The server paused a long server-tool turn; the client may send the reply back to continue it.
  pause_turn: "stop",
});

/**
 * Maps a `stop_reason`, always keeping Anthropic's own value in `native_finish_reason`. An
 * unknown reason reads as `stop`.
 * @example
 * mapStopReason("tool_use") // { finish_reason: "tool_calls", native_finish_reason: "tool_use" }
 */
export function mapStopReason(reason: unknown): { finish_reason: FinishReason; native_finish_reason?: string } {
  if (typeof reason !== "string") return { finish_reason: "stop" };
  return { finish_reason: STOP_REASONS[reason] ?? "stop", native_finish_reason: reason };
}

/**
 * Anthropic's usage -> OpenAI's. Anthropic counts cached input apart from `input_tokens`, so
 * `prompt_tokens` adds the cache writes and reads back in; `prompt_tokens_details` says how many
 * were read from the cache (`cached_tokens`, OpenAI's name) and written to it
 * (`cache_creation_tokens`). Thinking tokens, when reported, are `reasoning_tokens`.
 */
export function toUsage(usage: AnthropicUsage | Json | null | undefined): Usage {
  const u: Json = isObject(usage) ? usage : {};
  const cacheCreation = toInt(u.cache_creation_input_tokens);
  const cacheRead = toInt(u.cache_read_input_tokens);
  const prompt = toInt(u.input_tokens) + cacheCreation + cacheRead;
  const completion = toInt(u.output_tokens);
  const out: Usage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cacheRead, cache_creation_tokens: cacheCreation },
  };
  const details = u.output_tokens_details;
  if (isObject(details) && typeof details.thinking_tokens === "number") out.completion_tokens_details = { reasoning_tokens: toInt(details.thinking_tokens) };
  return out;
}

/**
 * Maps a parsed 200 reply. Text blocks are joined into `content` (null when the reply is only
 * tool calls); `tool_use` blocks become `tool_calls` with their `input` as the JSON `arguments`;
 * thinking and server-tool blocks are not part of a chat completion and are left out. The id is
 * Anthropic's message id (`msg_…`), so a reply can be found in Anthropic's console.
 * Throws 502 `upstream_error` when the body is not a Message.
 * @param context.model the bare model requested, used when the reply names none.
 */
export function toChatCompletion(body: unknown, context: { provider: string; model: string }): ChatCompletion {
  if (!isObject(body) || !Array.isArray(body.content)) {
    throw upstreamError(`${context.provider}: the reply is not an Anthropic message (no 'content' array).`);
  }
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const block of body.content) {
    if (!isObject(block)) continue;
    if (block.type === "text" && typeof block.text === "string") texts.push(block.text);
    if (block.type === "tool_use") {
      toolCalls.push({
        id: typeof block.id === "string" ? block.id : `toolu_${toolCalls.length}`,
        type: "function",
        function: { name: typeof block.name === "string" ? block.name : "", arguments: JSON.stringify(block.input ?? {}) },
      });
    }
  }
  const content = texts.length > 0 ? texts.join("") : toolCalls.length > 0 ? null : "";
  const message: ChatCompletion["choices"][number]["message"] = { role: "assistant", content };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    id: typeof body.id === "string" && body.id ? body.id : `msg_${crypto.randomUUID()}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: typeof body.model === "string" && body.model ? body.model : context.model,
    choices: [{ index: 0, ...mapStopReason(body.stop_reason), message }],
    usage: toUsage(isObject(body.usage) ? body.usage : undefined),
  };
}

/** Parses and maps a 200 reply's text; a body that is not JSON is a 502 (`parseUpstreamJson`), not a crash. */
export function parseMessageText(text: string, context: { provider: string; model: string }): ChatCompletion {
  return toChatCompletion(parseUpstreamJson(text, context.provider), context);
}
