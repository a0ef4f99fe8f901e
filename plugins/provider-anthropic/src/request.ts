/**
 * Normalised chat request (OpenAI's format) -> the body of Anthropic's `POST /v1/messages`. Pure
 * functions: what has no Anthropic equivalent is dropped or refused here, in one place, and the
 * README's translation table lists every decision.
 */
import { invalidRequest, parseJsonArgument, type ChatMessage, type ChatRequest, type ContentPart, type FunctionTool, type ToolChoice } from "@modelmux/core";
import type {
  AnthropicCacheControl,
  AnthropicContentBlockParam,
  AnthropicImageBlockParam,
  AnthropicImageMediaType,
  AnthropicMessageParam,
  AnthropicRequest,
  AnthropicTextBlockParam,
  AnthropicTool,
  AnthropicToolChoice,
} from "./wire.ts";

/**
 * `reasoning_effort` -> `thinking.budget_tokens`. Anthropic's minimum budget is 1024, so `minimal`
 * and `low` share it.
 */
export const THINKING_BUDGETS: Readonly<Record<NonNullable<ChatRequest["reasoning_effort"]>, number>> = Object.freeze({
  minimal: 1024,
  low: 1024,
  medium: 4096,
  high: 16384,
});

/** Anthropic accepts `temperature` in 0..1 only; OpenAI's 0..2 is clamped to it. */
export const MAX_TEMPERATURE = 1;

/** The plugin options the request mapping needs. */
export interface RequestOptions {
  /** `max_tokens` when the request sets neither `max_completion_tokens` nor `max_tokens`: Anthropic requires one. */
  defaultMaxTokens: number;
  /** The request continues its final assistant message (`ProviderCall.continuation`). */
  continuation?: boolean;
}

type Json = Record<string, unknown>;
type Block = AnthropicContentBlockParam;
type ResultBlock = AnthropicTextBlockParam | AnthropicImageBlockParam;

/** Keeps a client's `cache_control` on a content part (Anthropic prompt caching), as clients send it. */
function withCacheControl<T extends ResultBlock>(block: T, part: ContentPart): T {
  const cacheControl = (part as Json).cache_control;
  if (typeof cacheControl === "object" && cacheControl !== null) block.cache_control = cacheControl as AnthropicCacheControl;
  return block;
}

const DATA_URL = /^data:([^;,]+)((?:;[^;,]*)*?);base64,/i;

/**
 * An `image_url` part's URL -> an image block: a base64 `data:` URL becomes a base64 source, an
 * http(s) URL a URL source that Anthropic fetches itself. Anything else is a 400 naming the part.
 * @example
 * toImageBlock("data:image/png;base64,iVBORw0…", "messages[0].content[1]")
 * // { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0…" } }
 */
export function toImageBlock(url: string, param: string): AnthropicImageBlockParam {
  const data = DATA_URL.exec(url);
  if (data) {
    const mediaType = data[1]!.toLowerCase() as AnthropicImageMediaType;
    return { type: "image", source: { type: "base64", media_type: mediaType, data: url.slice(data[0].length) } };
  }
  if (/^https?:\/\//i.test(url)) return { type: "image", source: { type: "url", url } };
  throw invalidRequest(`${param}.image_url.url: Anthropic takes an http(s) URL or a base64 data: URL for an image.`, { param: `${param}.image_url.url` });
}

/** One content part -> a text or image block, or undefined for an empty text (Anthropic rejects those). */
function toBlock(part: ContentPart, param: string): ResultBlock | undefined {
  if (part.type === "text" && typeof part.text === "string") return part.text ? withCacheControl({ type: "text", text: part.text }, part) : undefined;
  if (part.type === "image_url" && typeof part.image_url === "object" && part.image_url !== null) {
    return withCacheControl(toImageBlock(String((part.image_url as Json).url), param), part);
  }
  // An assistant turn replayed from OpenAI may carry its refusal as a part: keep what was said.
  if (part.type === "refusal" && typeof part.refusal === "string") return part.refusal ? { type: "text", text: part.refusal } : undefined;
  throw invalidRequest(`${param}.type: Anthropic does not accept '${part.type}' content parts.`, { param: `${param}.type` });
}

/** A message's content -> blocks; a plain string is one text block. */
function toBlocks(content: ChatMessage["content"], param: string): ResultBlock[] {
  if (typeof content === "string") return content ? [{ type: "text", text: content }] : [];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part, j) => toBlock(part, `${param}[${j}]`) ?? []);
}

/**
 * System and developer messages -> `system`. Anthropic has one system prompt before the
 * conversation, so every such message is lifted there, in order, wherever it stood. Plain strings
 * are joined with a blank line; when any of them is given as parts, `system` is text blocks, which
 * keeps each part's `cache_control`.
 */
export function toSystem(messages: readonly ChatMessage[]): string | AnthropicTextBlockParam[] | undefined {
  const system = messages.map((m, i) => ({ m, i })).filter(({ m }) => m.role === "system" || m.role === "developer");
  if (system.length === 0) return undefined;
  if (system.every(({ m }) => typeof m.content === "string")) return system.map(({ m }) => m.content as string).join("\n\n");
  return system.flatMap(({ m, i }) =>
    toBlocks(m.content, `messages[${i}].content`).filter((b): b is AnthropicTextBlockParam => b.type === "text"),
  );
}

/**
 * A tool call's `arguments` (a JSON string) -> the `input` object Anthropic requires. An empty
 * string is `{}` (some clients send that for a tool without parameters); anything that is not a
 * JSON object is a 400 naming the field, rather than silently replaying a different call, and so
 * is an object nested past the request nesting limit (`parseJsonArgument`).
 */
export function parseToolArguments(text: string, param: string): Record<string, unknown> {
  if (!text.trim()) return {};
  const value = parseJsonArgument(text, param);
  if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  throw invalidRequest(`${param}: Anthropic needs a tool call's arguments to be a JSON object.`, { param });
}

function assistantBlocks(message: ChatMessage, i: number): Block[] {
  if (message.function_call != null) {
    throw invalidRequest(`messages[${i}].function_call: the deprecated function_call is not supported for Anthropic; use tool_calls.`, { param: `messages[${i}].function_call` });
  }
  const blocks: Block[] = toBlocks(message.content, `messages[${i}].content`);
  for (const [j, call] of (message.tool_calls ?? []).entries()) {
    const input = parseToolArguments(call.function.arguments, `messages[${i}].tool_calls[${j}].function.arguments`);
    blocks.push({ type: "tool_use", id: call.id, name: call.function.name, input });
  }
  return blocks;
}

function toolResultBlock(message: ChatMessage, i: number): Block {
  const block: Block = { type: "tool_result", tool_use_id: message.tool_call_id ?? "" };
  if (typeof message.content === "string") {
    if (message.content) block.content = message.content;
  } else {
    const content = toBlocks(message.content, `messages[${i}].content`);
    if (content.length > 0) block.content = content;
  }
  return block;
}

/**
 * The conversation -> Anthropic's alternating turns. Tool messages become `tool_result` blocks of
 * a user turn, and consecutive turns of the same role are merged into one message's blocks, as
 * Anthropic requires (so a run of tool results is one user message, followed by any user text).
 * A turn that is a single plain text block is sent as a string.
 */
export function toMessages(messages: readonly ChatMessage[]): AnthropicMessageParam[] {
  const turns: Array<{ role: "user" | "assistant"; blocks: Block[] }> = [];
  const push = (role: "user" | "assistant", blocks: Block[]) => {
    if (blocks.length === 0) return;
    const last = turns.at(-1);
    if (last?.role === role) last.blocks.push(...blocks);
    else turns.push({ role, blocks });
  };
  messages.forEach((message, i) => {
    switch (message.role) {
      case "system":
      case "developer":
        return; // lifted into `system`
      case "user":
        return push("user", toBlocks(message.content, `messages[${i}].content`));
      case "assistant":
        return push("assistant", assistantBlocks(message, i));
      case "tool":
        return push("user", [toolResultBlock(message, i)]);
      default:
        throw invalidRequest(`messages[${i}].role: the deprecated '${message.role}' role is not supported for Anthropic; use tool messages.`, { param: `messages[${i}].role` });
    }
  });
  return turns.map(({ role, blocks }) => {
    const only = blocks[0];
    return blocks.length === 1 && only?.type === "text" && !only.cache_control ? { role, content: only.text } : { role, content: blocks };
  });
}

/**
 * The final assistant turn of a continuation without trailing whitespace, which Anthropic refuses
 * in a prefill. The core sends it trimmed already; a text block left empty is dropped (Anthropic
 * rejects those), and so is a turn left with nothing.
 */
function trimFinalAssistant(messages: AnthropicMessageParam[]): void {
  const last = messages.at(-1);
  if (last?.role !== "assistant") return;
  if (typeof last.content === "string") last.content = last.content.trimEnd();
  else {
    const block = last.content.at(-1);
    if (block?.type === "text") block.text = block.text.trimEnd();
    if (block?.type === "text" && !block.text) last.content.pop();
  }
  if (last.content.length === 0) messages.pop();
}

/** OpenAI tools -> Anthropic tools. A tool without `parameters` takes any object. */
export function toTools(tools: readonly FunctionTool[]): AnthropicTool[] {
  return tools.map(({ function: fn }) => {
    const tool: AnthropicTool = { name: fn.name, input_schema: { type: "object", ...fn.parameters } };
    if (fn.description) tool.description = fn.description;
    return tool;
  });
}

/**
 * `tool_choice` and `parallel_tool_calls` -> Anthropic's `tool_choice`: `none`, `auto`,
 * `required` -> `any`, a named function -> `tool`. `parallel_tool_calls: false` is
 * `disable_parallel_tool_use: true` (on `auto` when no choice was given; `none` calls no tool anyway).
 */
export function toToolChoice(choice: ToolChoice | null | undefined, parallelToolCalls: boolean | null | undefined): AnthropicToolChoice | undefined {
  if (choice === "none") return { type: "none" };
  const single = parallelToolCalls === false ? { disable_parallel_tool_use: true } : {};
  if (choice === "required") return { type: "any", ...single };
  if (typeof choice === "object" && choice !== null) return { type: "tool", name: choice.function.name, ...single };
  if (choice === "auto" || parallelToolCalls === false) return { type: "auto", ...single };
  return undefined;
}

/**
 * Extended thinking cannot be enabled when the last assistant turn is a tool call: Anthropic wants
 * that turn to start with the thinking block it produced, and chat completions never carry one back.
 */
function canThink(messages: readonly ChatMessage[]): boolean {
  const lastAssistant = messages.findLast((m) => m.role === "assistant");
  return (lastAssistant?.tool_calls?.length ?? 0) === 0;
}

/**
 * Builds the upstream body. The core has already checked capabilities, so a `reasoning_effort`
 * that arrives here is for a model that thinks (by the plugin's defaults or the config's override).
 * - `max_tokens` = `max_completion_tokens` ?? `max_tokens` ?? `defaultMaxTokens`.
 * - `reasoning_effort` -> `thinking` with a budget from `THINKING_BUDGETS`; `max_tokens` is raised to
 *   budget + max_tokens when it is not above the budget; `temperature` and `top_p`, which thinking
 *   forbids, are dropped.
 * - A continuation (`options.continuation`) never thinks: Anthropic refuses a prefill with extended
 *   thinking, so `reasoning_effort` is dropped for that call (docs/plugins.md, "Stream
 *   continuation"), and the final assistant text loses its trailing whitespace.
 * - `temperature` is clamped to 0..1; `user` -> `metadata.user_id`; `stop` -> `stop_sequences`.
 * - `seed`, `frequency_penalty`, `presence_penalty`, `logit_bias`, `service_tier`, `prediction`,
 *   `prompt_cache_key` have no equivalent and are dropped. (`n`, `logprobs`, `response_format` and
 *   audio are refused earlier by the capability map.)
 * @example
 * toAnthropicRequest({ model: "x", messages: [{ role: "user", content: "Hi" }] }, "claude-sonnet-4-5", { defaultMaxTokens: 4096 })
 * // { model: "claude-sonnet-4-5", max_tokens: 4096, messages: [{ role: "user", content: "Hi" }] }
 */
export function toAnthropicRequest(request: ChatRequest, model: string, options: RequestOptions): AnthropicRequest {
  const body: AnthropicRequest = {
    model,
    max_tokens: request.max_completion_tokens ?? request.max_tokens ?? options.defaultMaxTokens,
    messages: toMessages(request.messages),
  };
  const system = toSystem(request.messages);
  if (system !== undefined && system.length > 0) body.system = system;
  if (request.stop != null) body.stop_sequences = typeof request.stop === "string" ? [request.stop] : [...request.stop];
  if (request.temperature != null) body.temperature = Math.min(MAX_TEMPERATURE, request.temperature);
  if (request.top_p != null) body.top_p = request.top_p;
  if (request.tools && request.tools.length > 0) {
    body.tools = toTools(request.tools);
    // A tool_choice without tools is an Anthropic 400; OpenAI ignores it.
    const toolChoice = toToolChoice(request.tool_choice, request.parallel_tool_calls);
    if (toolChoice) body.tool_choice = toolChoice;
  }
  if (options.continuation) trimFinalAssistant(body.messages);
  // Not for a continuation: Anthropic refuses a final assistant message with extended thinking
  // (docs/plugins.md, "Stream continuation"); the rest of the answer comes without thinking.
  if (request.reasoning_effort != null && !options.continuation && canThink(request.messages)) {
    const budget = THINKING_BUDGETS[request.reasoning_effort];
    body.thinking = { type: "enabled", budget_tokens: budget };
    if (body.max_tokens <= budget) body.max_tokens += budget;
    delete body.temperature;
    delete body.top_p;
  }
  if (request.user) body.metadata = { user_id: request.user };
  if (request.stream) body.stream = true;
  return body;
}
