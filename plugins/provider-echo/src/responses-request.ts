/**
 * A Responses API request read as the chat request the echo model answers (`reply.ts`), so that
 * `/v1/responses` follows the same rules as chat: the same text, tool calls, schema examples and
 * limits (README, "Responses API"). Pure: the conversation of a `previous_response_id` and the
 * items an `item_reference` names come in as arguments.
 */
import { randomUUID } from "node:crypto";
import type { ChatMessage, ChatRequest, ContentPart, FunctionTool, JsonObject, ToolCall } from "@modelmux/core";

type Json = JsonObject;

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const text = (value: unknown): string => (typeof value === "string" ? value : "");

/** A new item id with OpenAI's prefix for its kind (`msg`, `fc`, `resp`). */
export function echoId(kind: string): string {
  return `${kind}_echo_${randomUUID().replaceAll("-", "")}`;
}

/**
 * The input as a list of items, each with an id (as OpenAI's `input_items` list shows them): a
 * string is one user message; a message's string content becomes one `input_text` part.
 */
export function inputItems(input: unknown): Json[] {
  const items = typeof input === "string" ? [{ type: "message", role: "user", content: input }] : Array.isArray(input) ? input.filter(isObject) : [];
  return items.map((item) => {
    const content = typeof item.content === "string" ? [{ type: "input_text", text: item.content }] : item.content;
    const base = item.role ? { type: "message", status: "completed", ...item, content } : { ...item };
    return { id: echoId("msg"), ...base };
  });
}

/** A content part as the chat rules read it: text as text, an image as `[image]`, anything else as `[<type>]`. */
function chatPart(part: Json): ContentPart {
  if (part.type === "input_text" || part.type === "output_text") return { type: "text", text: text(part.text) };
  if (part.type === "refusal") return { type: "text", text: text(part.refusal) };
  if (part.type === "input_image") return { type: "image_url", image_url: { url: text(part.image_url) } };
  return { type: String(part.type) };
}

/** A tool's output (a string, or content parts) as the text of a `tool` message. */
function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  if (!Array.isArray(output)) return JSON.stringify(output ?? "");
  return output
    .filter(isObject)
    .map((part) => (part.type === "input_text" ? text(part.text) : `[${String(part.type)}]`))
    .join("\n");
}

const ROLES = new Set(["user", "system", "developer", "assistant"]);

/**
 * Appends one input item to the chat conversation: a message as a message, a `function_call` as a
 * tool call of an assistant message (calls in a row share one, as chat sends them), a
 * `function_call_output` as a `tool` message. Items the echo has no use for (reasoning, hosted tool
 * calls) add nothing.
 */
function addItem(messages: ChatMessage[], item: Json): void {
  if (item.type === "function_call") {
    const call: ToolCall = { id: text(item.call_id), type: "function", function: { name: text(item.name), arguments: text(item.arguments) } };
    const last = messages.at(-1);
    if (last?.role === "assistant" && last.tool_calls?.length) last.tool_calls.push(call);
    else messages.push({ role: "assistant", content: null, tool_calls: [call] });
    return;
  }
  if (item.type === "function_call_output") {
    messages.push({ role: "tool", tool_call_id: text(item.call_id), content: outputText(item.output) });
    return;
  }
  if ((item.type === undefined || item.type === "message") && typeof item.role === "string" && ROLES.has(item.role)) {
    const content = typeof item.content === "string" ? item.content : Array.isArray(item.content) ? item.content.filter(isObject).map(chatPart) : "";
    messages.push({ role: item.role as ChatMessage["role"], content });
  }
}

/**
 * Items as a chat conversation. An `item_reference` is replaced by the item `resolve` finds (an
 * item of a kept response), or skipped when there is none.
 */
export function itemsToMessages(items: Json[], resolve: (id: string) => Json | undefined = () => undefined): ChatMessage[] {
  const messages: ChatMessage[] = [];
  for (const item of items) {
    const found = item.type === "item_reference" ? resolve(text(item.id)) : item;
    if (found && found.type !== "item_reference") addItem(messages, found);
  }
  return messages;
}

/** The function tools, in the chat shape; hosted tools (web search and the like) the echo cannot call. */
function functionTools(tools: unknown): FunctionTool[] {
  if (!Array.isArray(tools)) return [];
  return tools
    .filter((tool): tool is Json => isObject(tool) && tool.type === "function" && typeof tool.name === "string")
    .map((tool) => ({ type: "function", function: { name: tool.name as string, parameters: isObject(tool.parameters) ? tool.parameters : null } }));
}

/**
 * `tool_choice` in the chat shape, and the tools it allows: a named function is that function;
 * `allowed_tools` keeps the tools it lists with its mode; a hosted tool, which the echo never
 * calls, leaves the function tools to `auto`.
 */
function toolChoice(choice: unknown, tools: FunctionTool[]): { tools: FunctionTool[]; choice: ChatRequest["tool_choice"] } {
  if (choice === "none" || choice === "auto" || choice === "required") return { tools, choice };
  if (!isObject(choice)) return { tools, choice: "auto" };
  if (choice.type === "function" && typeof choice.name === "string") return { tools, choice: { type: "function", function: { name: choice.name } } };
  if (choice.type === "allowed_tools" && Array.isArray(choice.tools)) {
    const names = new Set(choice.tools.filter(isObject).map((tool) => tool.name));
    return { tools: tools.filter((tool) => names.has(tool.function.name)), choice: choice.mode === "required" ? "required" : "auto" };
  }
  return { tools, choice: "auto" };
}

/** `text.format` as the chat `response_format`: `json_schema` and `json_object` carry over. */
function responseFormat(textConfig: unknown): ChatRequest["response_format"] {
  const format = isObject(textConfig) && isObject(textConfig.format) ? textConfig.format : undefined;
  if (format?.type === "json_schema") return { type: "json_schema", json_schema: { name: format.name, schema: format.schema } };
  if (format?.type === "json_object") return { type: "json_object" };
  return undefined;
}

/**
 * The chat request the echo answers for a Responses API `body`: `instructions` first (a string as
 * a system message, or items), then `conversation` (the chain of `previous_response_id` and the
 * input, as messages); `max_output_tokens` as the token limit.
 */
export function toChatRequest(body: Json, conversation: ChatMessage[]): ChatRequest {
  const { instructions } = body;
  const system: ChatMessage[] =
    typeof instructions === "string" ? (instructions === "" ? [] : [{ role: "system", content: instructions }]) : itemsToMessages(inputItems(instructions));
  const { tools, choice } = toolChoice(body.tool_choice, functionTools(body.tools));
  const format = responseFormat(body.text);
  return {
    model: text(body.model),
    messages: [...system, ...conversation],
    ...(tools.length > 0 && { tools, tool_choice: choice }),
    ...(format && { response_format: format }),
    ...(typeof body.max_output_tokens === "number" && { max_completion_tokens: body.max_output_tokens }),
  };
}
