/**
 * Normalised chat request -> Parrot `/v2/generate` body. A pure function: the core has already
 * validated the request and refused what the capability map says Parrot lacks (images, JSON mode,
 * `n`, logprobs…). Fields Parrot has no equivalent for (`seed`, penalties, `user`) are dropped.
 */
import { invalidRequest, type ChatMessage, type ChatRequest } from "@modelmux/core";
import type { ParrotRequest, ParrotTurn } from "./parrot-api.ts";

const SPEAKERS = { system: "system", developer: "system", user: "human", assistant: "bot" } as const;

/** Text parts only: the capability map keeps images and audio away from this plugin. */
function textOf(content: ChatMessage["content"]): string {
  if (typeof content === "string") return content;
  return (content ?? []).flatMap((part) => (part.type === "text" && typeof part.text === "string" ? [part.text] : [])).join("\n");
}

/** Parrot wants tool input as a value; the client sent it as a JSON string. */
function parseArguments(text: string, param: string): unknown {
  try {
    return JSON.parse(text || "{}");
  } catch {
    throw invalidRequest(`${param} is not valid JSON`, { param });
  }
}

/**
 * Parrot has no tool call ids: a tool result names its tool instead. So the ids of earlier
 * assistant tool calls are remembered to find the name a `tool` message answers.
 */
function toTurns(messages: readonly ChatMessage[]): ParrotTurn[] {
  const toolNames = new Map<string, string>();
  const turns: ParrotTurn[] = [];
  messages.forEach((message, i) => {
    if (message.role === "tool" || message.role === "function") {
      const tool = message.role === "tool" ? toolNames.get(message.tool_call_id ?? "") : (message.name ?? undefined);
      if (tool === undefined) throw invalidRequest(`messages[${i}].tool_call_id does not match an earlier tool call`, { param: `messages[${i}].tool_call_id` });
      turns.push({ speaker: "tool", tool, text: textOf(message.content) });
      return;
    }
    const speaker = SPEAKERS[message.role];
    const text = textOf(message.content);
    const calls = message.tool_calls ?? [];
    if (text || calls.length === 0) turns.push({ speaker, text });
    calls.forEach((call, j) => {
      toolNames.set(call.id, call.function.name);
      const input = parseArguments(call.function.arguments, `messages[${i}].tool_calls[${j}].function.arguments`);
      turns.push({ speaker: "bot", text: "", call: { tool: call.function.name, input } });
    });
  });
  return turns;
}

/**
 * Builds the upstream body for the bare model id the core resolved.
 * @example
 * toParrotRequest({ model: "parrot-1", messages: [{ role: "user", content: "Hi" }], stop: "END" }, "parrot-1")
 * // { model: "parrot-1", prompt: [{ speaker: "human", text: "Hi" }], stop_words: ["END"], stream: false }
 */
export function toParrotRequest(request: ChatRequest, model: string): ParrotRequest {
  const body: ParrotRequest = { model, prompt: toTurns(request.messages), stream: request.stream === true };
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  if (maxTokens != null) body.max_new_tokens = maxTokens;
  if (request.stop != null) body.stop_words = typeof request.stop === "string" ? [request.stop] : request.stop;
  if (request.temperature != null) body.temperature = request.temperature;
  if (request.top_p != null) body.top_p = request.top_p;

  const choice = request.tool_choice;
  if (choice === "required" || typeof choice === "object") {
    // Parrot decides on its own whether to call a tool; silently ignoring a forced call would lie.
    throw invalidRequest("parrot cannot be forced to call a tool: use tool_choice 'auto' or 'none'", { code: "unsupported_feature", param: "tool_choice" });
  }
  if (request.tools?.length && choice !== "none") {
    body.tools = request.tools.map(({ function: fn }) => ({
      name: fn.name,
      ...(fn.description ? { description: fn.description } : {}),
      schema: fn.parameters ?? { type: "object", properties: {} },
    }));
  }
  return body;
}
