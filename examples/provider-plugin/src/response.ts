/**
 * Parrot replies -> the normalised forms: a `/v2/generate` JSON reply -> `chat.completion`, and an
 * error reply -> the core's error. Pure functions of what the plugin read.
 */
import { headerValue, parseUpstreamJson, providerError, upstreamError, type ChatCompletion, type FinishReason, type ModelmuxError, type ToolCall, type UpstreamErrorReply, type Usage } from "@modelmux/core";
import type { ParrotCall, ParrotProblem, ParrotReply, ParrotTokens } from "./parrot-api.ts";

const FINISH: Record<string, FinishReason> = { complete: "stop", budget: "length", stop_word: "stop", tool: "tool_calls" };

/**
 * Parrot's `done_reason` -> OpenAI's `finish_reason`; Parrot's own word is kept in
 * `native_finish_reason` (a stop word and a natural end are both `stop` to an OpenAI client).
 */
export function mapDoneReason(reason: unknown): { finish_reason: FinishReason; native_finish_reason?: string } {
  const native = typeof reason === "string" ? reason : undefined;
  return { finish_reason: (native && FINISH[native]) || "stop", ...(native ? { native_finish_reason: native } : {}) };
}

export function mapTokens(tokens: Partial<ParrotTokens> | undefined): Usage {
  const prompt = tokens?.in ?? 0;
  const completion = tokens?.out ?? 0;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** Parrot's calls have no id and an input value; OpenAI's have an id and a JSON string. */
export function mapCall(call: ParrotCall, id: string): ToolCall {
  return { id, type: "function", function: { name: call.tool, arguments: JSON.stringify(call.input ?? {}) } };
}

/** Maps a parsed 200 reply; throws 502 when it is not a Parrot reply at all. */
export function toChatCompletion(reply: ParrotReply, context: { provider: string; model: string }): ChatCompletion {
  if (typeof reply !== "object" || reply === null || typeof reply.output !== "object" || reply.output === null) {
    throw upstreamError(`${context.provider}: the reply has no 'output'.`);
  }
  const id = typeof reply.id === "string" && reply.id ? reply.id : crypto.randomUUID();
  const { text, call } = reply.output;
  return {
    id: `chatcmpl-parrot-${id}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: context.model,
    choices: [
      {
        index: 0,
        ...mapDoneReason(reply.done_reason),
        message: { role: "assistant", content: typeof text === "string" ? text : null, ...(call ? { tool_calls: [mapCall(call, `call_${id}`)] } : {}) },
      },
    ],
    usage: mapTokens(reply.tokens),
  };
}

/** Parses a 200 reply's text: a body that is not JSON is the upstream's failure (502), not our bug. */
export function parseReplyText(text: string, context: { provider: string; model: string }): ChatCompletion {
  return toChatCompletion(parseUpstreamJson(text, context.provider) as ParrotReply, context);
}

/** Reads `{"problem": {"kind", "detail"}}`, or falls back to the body text (a proxy's HTML page). */
export function readProblem(status: number, text: string): ParrotProblem {
  try {
    const { problem } = JSON.parse(text) as { problem?: Partial<ParrotProblem> };
    if (typeof problem?.detail === "string") return { kind: problem.kind ?? "unknown", detail: problem.detail };
  } catch {
    // Not JSON: use the text itself.
  }
  const flat = text.replace(/\s+/g, " ").trim().slice(0, 200);
  return { kind: "unknown", detail: flat || `HTTP ${status} with an empty body` };
}

/**
 * An error reply -> the error the core sends. `providerError` owns the status mapping (4xx kept,
 * 429 with `retry-after`, 5xx -> 502); Parrot's `kind` becomes the `code` of a 4xx.
 */
export function toProviderError(provider: string, reply: UpstreamErrorReply): ModelmuxError {
  const problem = readProblem(reply.status, reply.text);
  return providerError(provider, {
    status: reply.status,
    message: problem.detail,
    // A 429 keeps the standard `rate_limit_exceeded` code that clients test for.
    code: reply.status === 429 || problem.kind === "unknown" ? null : problem.kind,
    retryAfter: headerValue(reply.headers, "retry-after") ?? null,
  });
}
