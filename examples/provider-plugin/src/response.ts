/**
 * Parrot replies -> the normalised forms: a `/v2/generate` JSON reply -> `chat.completion`, and an
 * error reply -> the core's error. Pure functions of what the plugin read.
 */
import {
  errorMapper,
  parseUpstreamJson,
  upstreamError,
  type ChatCompletion,
  type ErrorMapper,
  type FinishReason,
  type ModelmuxError,
  type ToolCall,
  type UpstreamErrorInfo,
  type UpstreamErrorReply,
  type Usage,
} from "@modelmux/core";
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

/**
 * Reads Parrot's `{"problem": {"kind", "detail"}}` for the core's error mapping; a body that is
 * not one (a proxy's HTML page) is read by the kit as text.
 */
export function readProblem(payload: unknown): UpstreamErrorInfo | undefined {
  const problem = (payload as { problem?: Partial<ParrotProblem> } | null)?.problem;
  if (typeof problem?.detail !== "string") return undefined;
  const code = typeof problem.kind === "string" ? problem.kind : null;
  return { message: problem.detail, code, type: null, status: null, httpStatus: null, param: null, retryDelay: null };
}

/**
 * The provider's error mapping (the core's `errorMapper`, which owns the status mapping: 4xx
 * kept, 429 with `retry-after`, 5xx -> 502); Parrot's `kind` becomes the `code` of a 4xx.
 */
export const parrotErrors = (provider: string, secrets: readonly (string | undefined)[] = []): ErrorMapper => errorMapper({ provider, secrets, read: readProblem });

/** An error reply -> the error the core sends. */
export function toProviderError(provider: string, reply: UpstreamErrorReply): ModelmuxError {
  return parrotErrors(provider).fromReply(reply);
}
