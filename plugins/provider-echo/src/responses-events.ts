/**
 * A `Response` as the Server-Sent Events OpenAI streams it, numbered by `sequence_number`:
 * `response.created`, `response.in_progress`, then per output item `response.output_item.added`,
 * its content (a message's `response.content_part.added`, `response.output_text.delta`…,
 * `.done`, `response.content_part.done`; a function call's
 * `response.function_call_arguments.delta`…, `.done`), `response.output_item.done`, and last
 * `response.completed` or `response.incomplete`. No `[DONE]`. The events are made from the finished
 * response, so a create's stream and a resumed one (`GET /responses/{id}?stream=true`) are the same.
 */
import type { JsonObject } from "@modelmux/core";
import { pieceSize } from "./bounds.ts";
import { splitChars } from "./chars.ts";

type Json = JsonObject;

/** One event, before it is written: its type and its fields (`sequence_number` among them). */
export interface ResponseEvent {
  type: string;
  data: Json;
}

/** Pieces of `chunkSize` characters, larger when a long text would make more than `MAX_STREAM_PIECES`. */
const pieces = (text: string, chunkSize: number) => splitChars(text, pieceSize(text.length, chunkSize, 1));

/** The events that stream one output item at `index`. */
function itemEvents(item: Json, index: number, chunkSize: number): ResponseEvent[] {
  const itemId = item.id;
  const at = { item_id: itemId, output_index: index };
  if (item.type === "function_call") {
    const args = typeof item.arguments === "string" ? item.arguments : "";
    return [
      { type: "response.output_item.added", data: { output_index: index, item: { ...item, arguments: "", status: "in_progress" } } },
      ...pieces(args, chunkSize).map((delta) => ({ type: "response.function_call_arguments.delta", data: { ...at, delta } })),
      { type: "response.function_call_arguments.done", data: { ...at, name: item.name, arguments: args } },
      { type: "response.output_item.done", data: { output_index: index, item } },
    ];
  }
  const parts = Array.isArray(item.content) ? (item.content as Json[]) : [];
  return [
    { type: "response.output_item.added", data: { output_index: index, item: { ...item, status: "in_progress", content: [] } } },
    ...parts.flatMap((part, contentIndex): ResponseEvent[] => {
      const text = typeof part.text === "string" ? part.text : "";
      const where = { ...at, content_index: contentIndex };
      return [
        { type: "response.content_part.added", data: { ...where, part: { ...part, text: "" } } },
        ...pieces(text, chunkSize).map((delta) => ({ type: "response.output_text.delta", data: { ...where, delta, logprobs: [] } })),
        { type: "response.output_text.done", data: { ...where, text, logprobs: [] } },
        { type: "response.content_part.done", data: { ...where, part } },
      ];
    }),
    { type: "response.output_item.done", data: { output_index: index, item } },
  ];
}

/**
 * The events of `response`, from the first. A response with no output yet (a cancelled one) has
 * only `response.created`, with its status.
 * @param chunkSize characters per delta (the provider's `chunk_size`)
 */
export function responseEvents(response: Json, chunkSize: number): ResponseEvent[] {
  const output = Array.isArray(response.output) ? (response.output as Json[]) : [];
  const status = response.status;
  if (status !== "completed" && status !== "incomplete") return numbered([{ type: "response.created", data: { response } }]);
  // The response as it was before its output: queued for a background response, in progress otherwise.
  const started = { ...response, status: response.background === true ? "queued" : "in_progress", output: [], usage: null, incomplete_details: null };
  const events: ResponseEvent[] = [
    { type: "response.created", data: { response: started } },
    { type: "response.in_progress", data: { response: { ...started, status: "in_progress" } } },
    ...output.flatMap((item, index) => itemEvents(item, index, chunkSize)),
    { type: status === "incomplete" ? "response.incomplete" : "response.completed", data: { response } },
  ];
  return numbered(events);
}

function numbered(events: ResponseEvent[]): ResponseEvent[] {
  return events.map((event, sequence) => ({ type: event.type, data: { ...event.data, sequence_number: sequence } }));
}

/** The SSE text of `events` after `startingAfter` (a resumed stream's `starting_after`; none: all of them). */
export function sseText(events: ResponseEvent[], startingAfter = -1): string[] {
  return events
    .filter((event) => (event.data.sequence_number as number) > startingAfter)
    .map((event) => `event: ${event.type}\ndata: ${JSON.stringify({ type: event.type, ...event.data })}\n\n`);
}
