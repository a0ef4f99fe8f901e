/**
 * The chaos upstream's OpenAI Responses API wire format (`POST …/responses`), typed against the
 * official SDK (`openai/resources/responses/responses`, through the wire types of
 * `fixtures/fake-openai-responses.ts`): a `response` JSON reply; a stream of `event: <type>` frames
 * numbered by `sequence_number` from 0 (response.created, response.in_progress,
 * response.output_item.added, response.content_part.added, one response.output_text.delta per
 * token, response.output_text.done, response.content_part.done, response.output_item.done,
 * response.completed) with no `data: [DONE]`, as the API sends it; response.completed is the end
 * marker a `noDone` leaves out. Errors as OpenAI's `{ error: { message, type, param, code } }`; a
 * stream's error is the `error` event.
 */
import type { ResponseOutputMessage, ResponseUsage } from "openai/resources/responses/responses";
import type { WireEvent, WireResponse } from "../fixtures/fake-openai-responses.ts";
import { openaiWire } from "./chaos-openai-wire.ts";
import type { Answer, ChaosWire, Frame } from "./chaos-wire.ts";

type Unnumbered = WireEvent extends infer E ? (E extends unknown ? Omit<E, "sequence_number"> : never) : never;

function usageOf(answer: Answer): ResponseUsage {
  const output = answer.deltas.length;
  return {
    input_tokens: answer.promptTokens,
    input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: answer.promptTokens + output,
  };
}

/** The answer's one output message, its text whole (or empty, while it streams). */
function messageOf(answer: Answer, text: string, status: ResponseOutputMessage["status"]): ResponseOutputMessage {
  return { id: `msg_${answer.id}`, type: "message", role: "assistant", status, content: status === "completed" ? [{ type: "output_text", text, annotations: [], logprobs: [] }] : [] };
}

/** The response object, `in_progress` (no output, no usage yet) or `completed`. */
function responseOf(answer: Answer, completed: boolean): WireResponse {
  return {
    id: answer.id,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status: completed ? "completed" : "in_progress",
    background: false,
    completed_at: completed ? Math.floor(Date.now() / 1000) : null,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    max_tool_calls: null,
    model: answer.model,
    output: completed ? [messageOf(answer, answer.deltas.join(""), "completed")] : [],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    service_tier: "default",
    store: true,
    temperature: 1,
    text: { format: { type: "text" }, verbosity: "medium" },
    tool_choice: "auto",
    tools: [],
    top_p: 1,
    truncation: "disabled",
    usage: completed ? usageOf(answer) : null,
    user: null,
    metadata: {},
  };
}

/** One event's bytes, its keys in OpenAI's order: `type`, `sequence_number`, then the rest. */
function event(sequence_number: number, { type, ...rest }: Unnumbered | { type: "error"; code: string | null; message: string; param: string | null }): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number, ...rest })}\n\n`;
}

export const responsesWire: ChaosWire = {
  format: "responses",
  id: (name, index) => `resp_${name}_${index}`,
  headers: openaiWire.headers,
  json: (answer) => JSON.stringify(responseOf(answer, true)),
  frames(answer) {
    const text = answer.deltas.join("");
    const item_id = `msg_${answer.id}`;
    const at = { item_id, output_index: 0, content_index: 0 };
    const frames: Frame[] = [];
    const push = (kind: Frame["kind"], data: Unnumbered) => void frames.push({ kind, text: event(frames.length, data) });
    const start = responseOf(answer, false);
    push("head", { type: "response.created", response: start });
    push("head", { type: "response.in_progress", response: start });
    push("head", { type: "response.output_item.added", output_index: 0, item: messageOf(answer, "", "in_progress") });
    push("head", { type: "response.content_part.added", ...at, part: { type: "output_text", text: "", annotations: [], logprobs: [] } });
    for (const delta of answer.deltas) push("token", { type: "response.output_text.delta", ...at, delta, logprobs: [] });
    push("tail", { type: "response.output_text.done", ...at, text, logprobs: [] });
    push("tail", { type: "response.content_part.done", ...at, part: { type: "output_text", text, annotations: [], logprobs: [] } });
    push("tail", { type: "response.output_item.done", output_index: 0, item: messageOf(answer, text, "completed") });
    push("done", { type: "response.completed", response: responseOf(answer, true) });
    return frames;
  },
  malformedFrame: (answer) => `event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":"msg_${answer.id}","delta":\n\n`,
  errorEvent(reason, message, sequence = 0) {
    const { error } = JSON.parse(openaiWire.errorBody(0, reason, message)) as { error: { code: string | null; type: string; message: string; param: string | null } };
    return event(sequence, { type: "error", code: error.code ?? error.type, message: error.message, param: error.param });
  },
  errorBody: openaiWire.errorBody,
  messageOf: openaiWire.messageOf,
  refusal: (body) => (body === undefined ? openaiWire.messageOf("invalid_request") : undefined),
};
