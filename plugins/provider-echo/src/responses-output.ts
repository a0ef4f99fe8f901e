/**
 * The echo model's reply plan (`reply.ts`) as a Responses API `Response`: a `function_call` output
 * item for a tool call, else one assistant `message` with one `output_text` part; a text cut by a
 * limit makes the response `incomplete` (`max_output_tokens`), as OpenAI reports it.
 */
import type { JsonObject } from "@modelmux/core";
import type { ReplyPlan } from "./reply.ts";
import { echoId } from "./responses-request.ts";

type Json = JsonObject;

/** What one turn of the echo model produced, before it is wrapped in a `Response`. */
export interface EchoTurn {
  status: "completed" | "incomplete";
  output: Json[];
  usage: Json;
}

/** The output items and usage of `plan`. */
export function turnOf(plan: ReplyPlan): EchoTurn {
  const { prompt_tokens: input, completion_tokens: output } = plan.usage;
  const usage = { input_tokens: input, input_tokens_details: { cached_tokens: 0 }, output_tokens: output, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: input + output };
  const call = plan.toolCall;
  if (call) {
    const item = { id: echoId("fc"), type: "function_call", status: "completed", arguments: call.function.arguments, call_id: call.id, name: call.function.name };
    return { status: "completed", output: [item], usage };
  }
  const status = plan.finishReason === "length" ? "incomplete" : "completed";
  const message = { id: echoId("msg"), type: "message", role: "assistant", status, content: [{ type: "output_text", text: plan.content ?? "", annotations: [], logprobs: [] }] };
  return { status, output: [message], usage };
}

/** The fields of a `Response` that are not the request's. */
export interface ResponseState {
  id: string;
  createdAt: number;
  status: string;
  background: boolean;
  previousResponseId: string | null;
  /** The turn once it has run; absent while a background response is queued or in progress, or once cancelled. */
  turn?: EchoTurn;
}

/** The `Response` object for `body` in `state`, with the request's settings echoed as OpenAI does. */
export function responseObject(body: Json, state: ResponseState): Json {
  const { turn } = state;
  return {
    id: state.id,
    object: "response",
    created_at: state.createdAt,
    status: state.status,
    background: state.background,
    error: null,
    incomplete_details: state.status === "incomplete" ? { reason: "max_output_tokens" } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    metadata: body.metadata ?? {},
    model: body.model,
    output: turn?.output ?? [],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: state.previousResponseId,
    reasoning: body.reasoning ?? { effort: null, summary: null },
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: body.text ?? { format: { type: "text" } },
    tool_choice: body.tool_choice ?? "auto",
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? "disabled",
    usage: turn?.usage ?? null,
  };
}
