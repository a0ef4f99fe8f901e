/**
 * An OpenAI Chat Completions reply -> the normalised `ChatCompletion`, for every OpenAI-shaped
 * provider (docs/plugins.md, "The provider kit"). OpenAI's own replies already
 * have that shape; compatible servers often do not quite (no `usage`, no `created`, `null`
 * `finish_reason`, tool arguments as an object), so every required field is filled defensively.
 */
import { withRawJson } from "../../chat/raw-json.ts";
import { upstreamError } from "../../errors.ts";
import type { ChatChoice, ChatCompletion, ChatCompletionWithoutUsage, FinishReason, ToolCall, Usage } from "../../types/chat.ts";
import { parseUpstreamJson } from "../../upstream/send.ts";

type Json = Record<string, unknown>;

const FINISH_REASONS: ReadonlySet<string> = new Set(["stop", "length", "tool_calls", "content_filter", "error"]);

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const toInt = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.floor(value) : 0);

/**
 * Maps the upstream's finish reason. OpenAI's deprecated `function_call` is a tool call; anything
 * else unknown (a compatible server's own reason, or none) reads as `stop`, and the original is
 * kept in `native_finish_reason` so nothing is lost.
 */
export function mapFinishReason(reason: unknown): { finish_reason: FinishReason; native_finish_reason?: string } {
  if (typeof reason === "string" && FINISH_REASONS.has(reason)) return { finish_reason: reason as FinishReason };
  const mapped: FinishReason = reason === "function_call" ? "tool_calls" : "stop";
  return typeof reason === "string" ? { finish_reason: mapped, native_finish_reason: reason } : { finish_reason: mapped };
}

function mapToolCalls(value: unknown, choiceIndex: number): ToolCall[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  return value.filter(isObject).map((call, i) => {
    const fn = isObject(call.function) ? call.function : {};
    // Some servers (older Ollama) send the arguments as an object instead of a JSON string.
    const args = typeof fn.arguments === "string" ? fn.arguments : JSON.stringify(fn.arguments ?? {});
    return {
      id: typeof call.id === "string" ? call.id : `call_${choiceIndex}_${i}`,
      type: "function" as const,
      function: { name: typeof fn.name === "string" ? fn.name : "", arguments: args },
    };
  });
}

function mapChoice(raw: unknown, position: number): ChatChoice {
  const choice = isObject(raw) ? raw : {};
  const message = isObject(choice.message) ? choice.message : {};
  const index = typeof choice.index === "number" ? choice.index : position;
  const out: ChatChoice = {
    index,
    ...mapFinishReason(choice.finish_reason),
    message: { role: "assistant", content: typeof message.content === "string" ? message.content : null },
  };
  // OpenAI sends `refusal: null` and `logprobs: null`; kept so its replies pass through unchanged.
  if (typeof message.refusal === "string" || message.refusal === null) out.message.refusal = message.refusal;
  const toolCalls = mapToolCalls(message.tool_calls, index);
  if (toolCalls) out.message.tool_calls = toolCalls;
  if (Array.isArray(message.annotations)) out.message.annotations = message.annotations;
  if (isObject(message.audio)) out.message.audio = message.audio;
  if (isObject(choice.logprobs) || choice.logprobs === null) out.logprobs = choice.logprobs;
  return out;
}

/** The reply's usage, its total computed when missing; undefined when the upstream sent none (none is made up). */
function mapUsage(raw: unknown): Usage | undefined {
  if (!isObject(raw)) return undefined;
  const usage = raw;
  const prompt = toInt(usage.prompt_tokens);
  const completion = toInt(usage.completion_tokens);
  const out: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: toInt(usage.total_tokens) || prompt + completion };
  if (isObject(usage.prompt_tokens_details)) out.prompt_tokens_details = usage.prompt_tokens_details;
  if (isObject(usage.completion_tokens_details)) out.completion_tokens_details = usage.completion_tokens_details;
  return out;
}

/**
 * Maps a parsed 200 reply. Throws 502 `upstream_error` when it is not a chat completion at all. A
 * reply without `usage` (some compatible servers send none) is mapped without it.
 * @param context.model the bare model requested, used when the reply names none.
 * @param context.serviceTier the request's `service_tier`: the reply carries one only when the
 *   request set it (docs/interface.md, "What the router changes"), though OpenAI always sends it.
 */
export function toChatCompletion(body: unknown, context: { provider: string; model: string; serviceTier?: string | null }): ChatCompletion | ChatCompletionWithoutUsage {
  if (!isObject(body) || !Array.isArray(body.choices)) {
    throw upstreamError(`${context.provider}: the reply is not a chat completion (no 'choices' array).`);
  }
  const usage = mapUsage(body.usage);
  const completion: ChatCompletion | ChatCompletionWithoutUsage = {
    id: typeof body.id === "string" && body.id ? body.id : `chatcmpl-${crypto.randomUUID()}`,
    object: "chat.completion",
    created: typeof body.created === "number" && body.created >= 0 ? Math.floor(body.created) : Math.floor(Date.now() / 1000),
    model: typeof body.model === "string" && body.model ? body.model : context.model,
    choices: body.choices.map(mapChoice),
    ...(usage && { usage }),
  };
  if (context.serviceTier != null && typeof body.service_tier === "string") completion.service_tier = body.service_tier;
  if (typeof body.system_fingerprint === "string") completion.system_fingerprint = body.system_fingerprint;
  return completion;
}

// Already normal: what `toChatCompletion` would return unchanged ----------------------------------

const isCount = (value: unknown): boolean => typeof value === "number" && Number.isInteger(value) && value >= 0;
const COMPLETION_KEYS: ReadonlySet<string> = new Set(["id", "object", "created", "model", "choices", "usage", "service_tier", "system_fingerprint"]);
const CHOICE_KEYS: ReadonlySet<string> = new Set(["index", "finish_reason", "message", "logprobs"]);
const MESSAGE_KEYS: ReadonlySet<string> = new Set(["role", "content", "refusal", "tool_calls", "annotations", "audio"]);
const USAGE_KEYS: ReadonlySet<string> = new Set(["prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details", "completion_tokens_details"]);

function onlyKeys(value: Json, keys: ReadonlySet<string>): boolean {
  for (const key in value) if (!keys.has(key)) return false;
  return true;
}

function isNormalToolCall(call: unknown): boolean {
  if (!isObject(call) || typeof call.id !== "string" || call.type !== "function" || !isObject(call.function)) return false;
  const fn = call.function;
  return typeof fn.name === "string" && typeof fn.arguments === "string" && Object.keys(call).length === 3 && Object.keys(fn).length === 2;
}

function isNormalChoice(choice: unknown): boolean {
  if (!isObject(choice) || !onlyKeys(choice, CHOICE_KEYS) || typeof choice.index !== "number") return false;
  if (typeof choice.finish_reason !== "string" || !FINISH_REASONS.has(choice.finish_reason)) return false;
  if (choice.logprobs !== undefined && choice.logprobs !== null && !isObject(choice.logprobs)) return false;
  const message = choice.message;
  if (!isObject(message) || !onlyKeys(message, MESSAGE_KEYS) || message.role !== "assistant") return false;
  if (typeof message.content !== "string" && message.content !== null) return false;
  if (message.refusal !== undefined && typeof message.refusal !== "string" && message.refusal !== null) return false;
  if (message.annotations !== undefined && !Array.isArray(message.annotations)) return false;
  if (message.audio !== undefined && !isObject(message.audio)) return false;
  const calls = message.tool_calls;
  return calls === undefined || (Array.isArray(calls) && calls.length > 0 && calls.every(isNormalToolCall));
}

function isNormalUsage(usage: unknown): boolean {
  if (!isObject(usage) || !onlyKeys(usage, USAGE_KEYS)) return false;
  const { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total } = usage;
  if (!isCount(prompt) || !isCount(completion) || !isCount(total) || (total === 0 && (prompt as number) + (completion as number) > 0)) return false;
  return (usage.prompt_tokens_details === undefined || isObject(usage.prompt_tokens_details)) && (usage.completion_tokens_details === undefined || isObject(usage.completion_tokens_details));
}

/**
 * True when a parsed reply is already exactly what `toChatCompletion` makes of it (with the
 * request's `service_tier` set): OpenAI's own replies, and those of the servers that copy them
 * closely. Such a reply is sent as the text it came in (`withRawJson`), not mapped and serialised.
 */
export function isNormalCompletion(body: unknown): body is ChatCompletion | ChatCompletionWithoutUsage {
  if (!isObject(body) || !onlyKeys(body, COMPLETION_KEYS)) return false;
  if (typeof body.id !== "string" || body.id === "" || body.object !== "chat.completion" || !isCount(body.created)) return false;
  if (typeof body.model !== "string" || body.model === "" || !Array.isArray(body.choices) || !body.choices.every(isNormalChoice)) return false;
  if (body.service_tier !== undefined && typeof body.service_tier !== "string") return false;
  if (body.system_fingerprint !== undefined && typeof body.system_fingerprint !== "string") return false;
  // A reply without usage is mapped without it, so it is normal too.
  return body.usage === undefined || isNormalUsage(body.usage);
}

/** Parses and maps a 200 reply's text; a body that is not JSON is a 502 (`parseUpstreamJson`), not a crash. */
export function parseCompletionText(text: string, context: { provider: string; model: string; serviceTier?: string | null }): ChatCompletion | ChatCompletionWithoutUsage {
  const body = parseUpstreamJson(text, context.provider);
  if (!isNormalCompletion(body)) return toChatCompletion(body, context);
  // The reply is sent as it came; only `service_tier` is removed from it when the request did not set one.
  if (context.serviceTier == null) delete body.service_tier;
  return withRawJson(body, text);
}
