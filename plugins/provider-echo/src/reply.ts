/**
 * The echo model itself: a pure function from a chat request to the reply it gets (text or one tool
 * call, finish reason, usage). The JSON reply (`response.ts`) and the stream (`stream.ts`) are both
 * made from this plan, so they cannot disagree.
 */
import { createHash } from "node:crypto";
import type { ChatMessage, ChatRequest, FinishReason, FunctionTool, ToolCall, Usage } from "@modelmux/core";
import { choiceChars } from "./bounds.ts";
import { cutChars } from "./chars.ts";
import { exampleFromSchema } from "./schema-example.ts";
import { countTokens, truncateToTokens } from "./tokens.ts";

/** The reply text when the request has no user message to echo. */
export const NO_USER_MESSAGE_TEXT = "Nothing to echo: the request has no user message.";

/** What the echo model answers to one request. */
export interface ReplyPlan {
  /** How many identical choices to send (the request's `n`, at least 1). */
  n: number;
  /** The assistant's text; `null` when the reply is a tool call. */
  content: string | null;
  /** The one tool call, when the reply is a tool call. */
  toolCall: ToolCall | null;
  finishReason: Extract<FinishReason, "stop" | "length" | "tool_calls">;
  usage: Usage;
}

/** The text of a message's content: a string as is; parts joined with "\n", images as `[image]`. */
export function contentText(content: ChatMessage["content"]): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => {
      if (part.type === "text" && typeof part.text === "string") return part.text;
      return part.type === "image_url" ? "[image]" : `[${part.type}]`;
    })
    .join("\n");
}

/** Everything in a message that counts towards prompt tokens: its content and its tool calls. */
function messageText(message: ChatMessage): string {
  const calls = (message.tool_calls ?? []).map((call) => call.function.name + call.function.arguments);
  return [contentText(message.content), ...calls].join("");
}

/** Characters a tool name is made of (`functionName` in the core's schema): a mention is a whole run of them. */
function isNameChar(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || code === 0x5f || code === 0x2d;
}

/** Tool names are at most this long: longer words cannot be one. */
const MAX_NAME = 64;

/**
 * The first tool, in `tools` order, whose name `text` mentions: the name is a whole word of the
 * text (a run of name characters), ignoring case. One pass over the text, whatever the number of
 * tools: a long message and many tools cost their sum, not their product.
 */
function firstMentioned(tools: FunctionTool[], text: string): FunctionTool | undefined {
  const order = new Map<string, number>();
  tools.forEach((tool, index) => {
    const name = tool.function.name.toLowerCase();
    if (!order.has(name)) order.set(name, index);
  });
  let first = tools.length;
  for (let i = 0; i < text.length && first > 0; ) {
    if (!isNameChar(text.charCodeAt(i))) {
      i++;
      continue;
    }
    let end = i + 1;
    while (end < text.length && isNameChar(text.charCodeAt(end))) end++;
    if (end - i <= MAX_NAME) {
      const index = order.get(text.slice(i, end).toLowerCase());
      if (index !== undefined && index < first) first = index;
    }
    i = end;
  }
  return tools[first];
}

/**
 * The tool the reply calls, if any. `tool_choice` "none" never calls; a named function is always
 * called; "required" calls the first tool the last message mentions, else the first tool; "auto"
 * (the default) calls the first tool, in `tools` order, whose name the last message mentions, and
 * only when the last message is the user's (so a tool result is answered with text, not a loop).
 */
function chooseTool(request: ChatRequest, last: ChatMessage | undefined): string | null {
  const tools: FunctionTool[] = request.tools ?? [];
  const choice = request.tool_choice ?? "auto";
  if (tools.length === 0 || choice === "none") return null;
  if (typeof choice === "object") return choice.function.name;
  const text = last?.role === "user" ? contentText(last.content) : "";
  const mentioned = firstMentioned(tools, text);
  if (mentioned) return mentioned.function.name;
  return choice === "required" ? (tools[0]?.function.name ?? null) : null;
}

/** The text of the last user message, or `null` when there is none. */
function lastUserText(messages: ChatMessage[]): string | null {
  const user = messages.findLast((message) => message.role === "user");
  return user ? contentText(user.content) : null;
}

/** Answers the tool results that end the conversation: `Tool <name> returned: <content>`, one a line. */
function toolResultsText(messages: ChatMessage[]): string {
  const results: ChatMessage[] = [];
  for (let i = messages.length - 1; i >= 0 && messages[i]?.role === "tool"; i--) results.unshift(messages[i]!);
  const names = new Map<string, string>();
  for (const message of messages) for (const call of message.tool_calls ?? []) names.set(call.id, call.function.name);
  return results
    .map((result) => {
      const name = (result.tool_call_id && names.get(result.tool_call_id)) || result.name || "tool";
      return `Tool ${name} returned: ${contentText(result.content)}`;
    })
    .join("\n");
}

/** Derives an id from the conversation, so the same request gets the same tool call id. */
function toolCallId(request: ChatRequest, name: string): string {
  const hash = createHash("sha256").update(JSON.stringify([request.messages, name])).digest("hex");
  return `call_${hash.slice(0, 24)}`;
}

/**
 * Wraps the reply text as `response_format` asks: `{"echo": text}`, or a value of the given schema
 * of at most `maxChars` characters.
 */
function formatContent(text: string, format: ChatRequest["response_format"], maxChars: number): string {
  if (format?.type === "json_schema") {
    const spec = format.json_schema as { schema?: unknown } | undefined;
    if (spec?.schema !== undefined) return JSON.stringify(exampleFromSchema(spec.schema, text, maxChars));
  }
  if (format?.type === "json_object" || format?.type === "json_schema") return JSON.stringify({ echo: text });
  return text;
}

/**
 * Applies `max_completion_tokens` (or `max_tokens`) and `stop` like a model that generates left to
 * right: the text is first cut to the token limit; the earliest stop sequence that occurs whole in
 * what is left cuts it there with `stop`; otherwise a cut by the limit, or by the echo's own bound
 * (`capped`), finishes with `length`.
 */
function applyLimits(text: string, request: ChatRequest, capped: boolean): { text: string; finishReason: "stop" | "length" } {
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  const window = maxTokens == null ? text : truncateToTokens(text, maxTokens);
  const stops = (typeof request.stop === "string" ? [request.stop] : (request.stop ?? [])).filter((s) => s.length > 0);
  const cut = Math.min(...stops.map((stop) => window.indexOf(stop)).filter((index) => index >= 0));
  if (Number.isFinite(cut)) return { text: window.slice(0, cut), finishReason: "stop" };
  return { text: window, finishReason: capped || window.length < text.length ? "length" : "stop" };
}

/** The usage of `n` identical choices of `perChoice` tokens each. */
function usageOf(promptTokens: number, perChoice: number, n: number): Usage {
  return { prompt_tokens: promptTokens, completion_tokens: perChoice * n, total_tokens: promptTokens + perChoice * n };
}

/**
 * Plans the echo model's reply to `request`. Pure: the same request and prefix give the same plan.
 * A final assistant message (without tool calls) is a prefill, which the echo model continues
 * (`continueReply`).
 * @param prefix the provider's `prefix` option, put before every text reply
 */
export function planReply(request: ChatRequest, prefix = ""): ReplyPlan {
  const last = request.messages.at(-1);
  if (last?.role === "assistant" && !last.tool_calls?.length) return continueReply(request, last, prefix);
  return answerPlan(request, prefix);
}

/**
 * The continuation of a prefill, as a model with the `prefill` capability answers it
 * (docs/plugins.md, "Stream continuation"): the answer `A` the conversation gets without that
 * final message, less the prefill `P`. When `A` starts with `P` without its trailing whitespace
 * (which a continuation's prefill never has), the reply is the rest of `A`, so it often starts
 * with that whitespace; otherwise it is `A` whole. The prefill counts as prompt, only the reply as
 * completion.
 */
function continueReply(request: ChatRequest, prefill: ChatMessage, prefix: string): ReplyPlan {
  const whole = answerPlan({ ...request, messages: request.messages.slice(0, -1) }, prefix);
  const promptTokens = whole.usage.prompt_tokens + countTokens(messageText(prefill));
  const head = contentText(prefill.content).trimEnd();
  if (whole.content === null || !whole.content.startsWith(head)) return { ...whole, usage: usageOf(promptTokens, whole.usage.completion_tokens / whole.n, whole.n) };
  const content = whole.content.slice(head.length);
  return { ...whole, content, usage: usageOf(promptTokens, countTokens(content), whole.n) };
}

/**
 * The reply to a conversation as a new turn, never a continuation: what `planReply` answers when
 * the conversation does not end with a prefill. The Responses API has no prefill, so it answers
 * every conversation this way (`responses.ts`).
 */
export function answerPlan(request: ChatRequest, prefix: string): ReplyPlan {
  const n = Math.max(1, request.n ?? 1);
  const maxChars = choiceChars(n);
  const promptTokens = request.messages.reduce((sum, message) => sum + countTokens(messageText(message)), 0);
  const usage = (perChoice: number): Usage => usageOf(promptTokens, perChoice, n);
  const last = request.messages.at(-1);
  const userText = lastUserText(request.messages);

  const toolName = chooseTool(request, last);
  if (toolName !== null) {
    const parameters = request.tools?.find((tool) => tool.function.name === toolName)?.function.parameters;
    const args = JSON.stringify(parameters ? exampleFromSchema(parameters, userText ?? "", maxChars) : {});
    const toolCall: ToolCall = { id: toolCallId(request, toolName), type: "function", function: { name: toolName, arguments: args } };
    return { n, content: null, toolCall, finishReason: "tool_calls", usage: usage(countTokens(toolName + args)) };
  }

  const body = last?.role === "tool" ? toolResultsText(request.messages) : (userText ?? NO_USER_MESSAGE_TEXT);
  // The echo's own output limit (`bounds.ts`), applied before formatting so that JSON stays whole:
  // a cut text finishes with `length`, a JSON value that is whole does not.
  const full = prefix + body;
  const echoed = cutChars(full, maxChars);
  const plainText = request.response_format?.type !== "json_object" && request.response_format?.type !== "json_schema";
  const content = formatContent(echoed, request.response_format, maxChars);
  const { text, finishReason } = applyLimits(content, request, plainText && echoed !== full);
  return { n, content: text, toolCall: null, finishReason, usage: usage(countTokens(text)) };
}
