/**
 * Gemini `GenerateContentResponse` -> the normalised `ChatCompletion`. The pieces a stream needs
 * too (finish reasons, usage, tool-call ids, reading a candidate) are exported for `stream.ts`.
 */
import { createHash, randomUUID } from "node:crypto";
import { parseUpstreamJson, upstreamError, type ChatChoice, type ChatCompletion, type FinishReason, type ToolCall, type Usage } from "@modelmux/core";
import type { GeminiCandidate, GeminiFunctionCall, GeminiResponse, GeminiUsageMetadata } from "./wire.ts";

/** What the caller knows that the reply may not say. */
export interface ReplyContext {
  /** The provider's configured name, for error messages. */
  provider: string;
  /** The bare model requested, used when the reply has no `modelVersion`. */
  model: string;
  /** How many choices the request asked for (`choiceCount(request)`); a blocked prompt ends each of them. Default 1. */
  choices?: number;
}

/** The `content_filter` choice of a prompt blocked before generation, for each of `choices`. */
export function blockedChoices<T>(choices: number | undefined, choice: (index: number) => T): T[] {
  return Array.from({ length: choices ?? 1 }, (_, index) => choice(index));
}

/** Gemini's reasons for stopping because of its filters: `content_filter` in chat, a blocked prompt for images. */
export const CONTENT_FILTER_REASONS: ReadonlySet<string> = new Set([
  "SAFETY",
  "RECITATION",
  "BLOCKLIST",
  "PROHIBITED_CONTENT",
  "SPII",
  "IMAGE_SAFETY",
  "IMAGE_PROHIBITED_CONTENT",
  "IMAGE_RECITATION",
]);

/** The model's output is unusable: a tool call it could not form. */
const ERROR_REASONS: ReadonlySet<string> = new Set(["MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL"]);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
/** A token count as reported, or 0 when it is missing or not a count. */
export const tokenCount = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.floor(value) : 0);

/**
 * Maps a candidate's `finishReason`; the original is always kept in `native_finish_reason`.
 * STOP is `tool_calls` when the candidate called a function, else `stop`; MAX_TOKENS and
 * CONTINUATION `length`; the safety, recitation and blocklist family `content_filter`;
 * MALFORMED_FUNCTION_CALL and UNEXPECTED_TOOL_CALL `error`; anything else (OTHER, LANGUAGE…) `stop`.
 */
export function mapFinishReason(reason: string | undefined, hasToolCalls: boolean): { finish_reason: FinishReason; native_finish_reason?: string } {
  let finish: FinishReason = hasToolCalls ? "tool_calls" : "stop";
  if (reason === "MAX_TOKENS" || reason === "CONTINUATION") finish = "length";
  else if (reason !== undefined && CONTENT_FILTER_REASONS.has(reason)) finish = "content_filter";
  else if (reason !== undefined && ERROR_REASONS.has(reason)) finish = "error";
  return reason === undefined ? { finish_reason: finish } : { finish_reason: finish, native_finish_reason: reason };
}

/**
 * Gemini's usage -> OpenAI's. Thinking tokens are billed as output, so they count as completion
 * tokens (and as `reasoning_tokens`); tokens of server-side tool results count as prompt tokens.
 */
export function mapUsage(metadata: GeminiUsageMetadata | undefined): Usage {
  const meta = metadata ?? {};
  const prompt = tokenCount(meta.promptTokenCount) + tokenCount(meta.toolUsePromptTokenCount);
  const completion = tokenCount(meta.candidatesTokenCount) + tokenCount(meta.thoughtsTokenCount);
  const usage: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: tokenCount(meta.totalTokenCount) || prompt + completion };
  if (meta.cachedContentTokenCount != null) usage.prompt_tokens_details = { cached_tokens: tokenCount(meta.cachedContentTokenCount) };
  if (meta.thoughtsTokenCount != null) usage.completion_tokens_details = { reasoning_tokens: tokenCount(meta.thoughtsTokenCount) };
  return usage;
}

/**
 * The id of a function call that came without one (Gemini 2.x never sends one): derived from the
 * reply, the candidate and the call's position, so the JSON and the streamed form of one reply
 * give the same id, and two replies give different ones.
 */
export function toolCallId(responseId: string, candidateIndex: number, ordinal: number, call: GeminiFunctionCall): string {
  const hash = createHash("sha256").update(JSON.stringify([responseId, candidateIndex, ordinal, call.name ?? "", call.args ?? {}]));
  return `call_${hash.digest("hex").slice(0, 24)}`;
}

/** A Gemini function call as an OpenAI tool call. */
export function toToolCall(call: GeminiFunctionCall, id: string): ToolCall {
  return { id, type: "function", function: { name: call.name ?? "", arguments: JSON.stringify(call.args ?? {}) } };
}

/**
 * A candidate's answer: its text parts joined (null when there are none; `thought` parts are the
 * model's reasoning, not its answer) and its function calls.
 */
export function readCandidate(candidate: GeminiCandidate): { text: string | null; calls: GeminiFunctionCall[] } {
  let text: string | null = null;
  const calls: GeminiFunctionCall[] = [];
  for (const part of candidate.content?.parts ?? []) {
    if (!isObject(part)) continue;
    if (typeof part.text === "string" && part.thought !== true) text = (text ?? "") + part.text;
    if (isObject(part.functionCall)) calls.push(part.functionCall);
  }
  return { text, calls };
}

/** The chat id for a reply: Gemini's `responseId` when it sent one. */
export function completionId(responseId: string | undefined): string {
  return `chatcmpl-${responseId || randomUUID()}`;
}

/** `createTime` (Vertex sends it) in Unix seconds, else now. */
export function createdAt(createTime: string | undefined): number {
  const time = createTime ? Date.parse(createTime) : Number.NaN;
  return Math.floor((Number.isFinite(time) ? time : Date.now()) / 1000);
}

function mapCandidate(candidate: GeminiCandidate, position: number, responseId: string): ChatChoice {
  const index = typeof candidate.index === "number" ? candidate.index : position;
  const { text, calls } = readCandidate(candidate);
  const choice: ChatChoice = {
    index,
    ...mapFinishReason(candidate.finishReason, calls.length > 0),
    message: { role: "assistant", content: text },
  };
  if (calls.length > 0) choice.message.tool_calls = calls.map((call, i) => toToolCall(call, call.id || toolCallId(responseId, index, i, call)));
  return choice;
}

/**
 * Maps a parsed 200 reply. A prompt blocked before generation (`promptFeedback.blockReason`, no
 * candidates) is a choice with no content and `content_filter` for each choice asked for. Throws
 * 502 `upstream_error` for anything that is not a reply at all.
 */
export function toChatCompletion(body: unknown, context: ReplyContext): ChatCompletion {
  if (!isObject(body)) throw upstreamError(`${context.provider}: the reply is not a GenerateContentResponse.`);
  const reply = body as GeminiResponse;
  const candidates = Array.isArray(reply.candidates) ? reply.candidates.filter((candidate): boolean => isObject(candidate)) : [];
  const blockReason = reply.promptFeedback?.blockReason;
  if (candidates.length === 0 && !blockReason) throw upstreamError(`${context.provider}: the reply has no candidates.`);
  const responseId = typeof reply.responseId === "string" ? reply.responseId : "";
  const choices: ChatChoice[] =
    candidates.length > 0
      ? candidates.map((candidate, position) => mapCandidate(candidate, position, responseId))
      : blockedChoices(context.choices, (index): ChatChoice => ({ index, finish_reason: "content_filter", native_finish_reason: String(blockReason), message: { role: "assistant", content: null } }));
  return {
    id: completionId(responseId),
    object: "chat.completion",
    created: createdAt(reply.createTime),
    model: typeof reply.modelVersion === "string" && reply.modelVersion ? reply.modelVersion : context.model,
    choices,
    usage: mapUsage(isObject(reply.usageMetadata) ? reply.usageMetadata : undefined),
  };
}

/** Parses and maps a 200 reply's text; a body that is not JSON is a 502 (`parseUpstreamJson`), not a crash. */
export function parseCompletionText(text: string, context: ReplyContext): ChatCompletion {
  return toChatCompletion(parseUpstreamJson(text, context.provider), context);
}
