/**
 * The echo model behind the Responses API, so `/v1/responses` works offline (`responses.provider:
 * echo`). It answers the forwarded calls as OpenAI's API would, in its wire format: a create (JSON,
 * or the event sequence created → in_progress → output_item.added → content_part.added →
 * output_text.delta… → output_text.done → content_part.done → output_item.done → completed),
 * retrieve, delete, cancel and input_items. The reply echoes the last user input. Responses are
 * kept in memory (the newest 1,000) so they can be retrieved; a `background: true` response is
 * `queued` when created and `completed` from its first retrieve on, unless cancelled first.
 */
import { randomUUID } from "node:crypto";
import { providerError, replyBody, type ForwardReply, type ForwardRequest } from "@modelmux/core";
import { MAX_TEXT_CHARS, pieceSize } from "./bounds.ts";
import { cutChars, splitChars } from "./chars.ts";
import { countTokens, truncateToTokens } from "./tokens.ts";

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

const KEPT = 1000;

export interface EchoResponsesOptions {
  /** Provider name, for error messages. */
  name: string;
  prefix: string;
  chunkSize: number;
}

interface Kept {
  response: Json;
  input: Json[];
}

/** The input as a list of items, each with an id (as OpenAI's input_items list shows them). */
function inputItems(input: unknown): Json[] {
  const items = typeof input === "string" ? [{ type: "message", role: "user", content: input }] : Array.isArray(input) ? input.filter(isObject) : [];
  return items.map((item) => {
    const content = typeof item.content === "string" ? [{ type: "input_text", text: item.content }] : item.content;
    const base = item.role ? { type: "message", status: "completed", ...item, content } : { ...item };
    return { id: `msg_echo_${randomUUID().replaceAll("-", "")}`, ...base };
  });
}

/** The text to echo: the last user message's text parts, or the last tool output. */
function lastUserText(items: Json[]): string {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]!;
    if (item.type === "function_call_output") return typeof item.output === "string" ? item.output : JSON.stringify(item.output);
    if (item.role !== "user") continue;
    const parts = Array.isArray(item.content) ? item.content.filter(isObject) : [];
    return parts.map((part) => (typeof part.text === "string" ? part.text : `[${String(part.type)}]`)).join("\n");
  }
  return "Nothing to echo: the request has no user input.";
}

/** The id in a forwarded path, undefined when its percent-encoding is broken (no kept id has such a name). */
function decodedId(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

const sse = (type: string, data: Json) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

export function createEchoResponses({ name, prefix, chunkSize }: EchoResponsesOptions) {
  const kept = new Map<string, Kept>();
  const notFound = (id: string) => providerError(name, { status: 404, message: `No response found with id '${id}'.`, param: "response_id" });
  const json = (value: unknown): ForwardReply => ({ status: 200, contentType: "application/json", body: replyBody([JSON.stringify(value)]) });

  function keep(id: string, entry: Kept): void {
    kept.set(id, entry);
    if (kept.size > KEPT) kept.delete(kept.keys().next().value!);
  }

  function create(body: Json, stream: boolean): ForwardReply {
    const items = inputItems(body.input);
    const previous = typeof body.previous_response_id === "string" ? body.previous_response_id : null;
    if (previous !== null && !kept.has(previous)) throw providerError(name, { status: 400, message: `Previous response with id '${previous}' not found.`, param: "previous_response_id" });
    const full = prefix + lastUserText(items);
    const limit = typeof body.max_output_tokens === "number" ? body.max_output_tokens : undefined;
    // The echo's own output limit (`bounds.ts`) acts like a `max_output_tokens` the model has.
    const bounded = cutChars(full, MAX_TEXT_CHARS);
    const text = limit === undefined ? bounded : truncateToTokens(bounded, limit);
    const incomplete = text !== full;
    const inputTokens = items.reduce((sum, item) => sum + countTokens(JSON.stringify(item.content ?? item.output ?? "")), 0);
    const outputTokens = countTokens(text);
    const id = `resp_echo_${randomUUID().replaceAll("-", "")}`;
    const messageId = `msg_echo_${randomUUID().replaceAll("-", "")}`;
    const background = body.background === true;
    const message = { id: messageId, type: "message", role: "assistant", status: incomplete ? "incomplete" : "completed", content: [{ type: "output_text", text, annotations: [], logprobs: [] }] };
    const response: Json = {
      id,
      object: "response",
      created_at: Math.floor(Date.now() / 1000),
      status: background ? "queued" : incomplete ? "incomplete" : "completed",
      background,
      error: null,
      incomplete_details: incomplete ? { reason: "max_output_tokens" } : null,
      instructions: body.instructions ?? null,
      max_output_tokens: limit ?? null,
      metadata: body.metadata ?? {},
      model: body.model,
      output: background ? [] : [message],
      parallel_tool_calls: body.parallel_tool_calls ?? true,
      previous_response_id: previous,
      reasoning: body.reasoning ?? { effort: null, summary: null },
      store: body.store ?? true,
      temperature: body.temperature ?? 1,
      text: body.text ?? { format: { type: "text" } },
      tool_choice: body.tool_choice ?? "auto",
      tools: body.tools ?? [],
      top_p: body.top_p ?? 1,
      truncation: body.truncation ?? "disabled",
      usage: background ? null : { input_tokens: inputTokens, input_tokens_details: { cached_tokens: 0 }, output_tokens: outputTokens, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: inputTokens + outputTokens },
    };
    // What a background response becomes once it has run.
    const finished = { ...response, status: incomplete ? "incomplete" : "completed", output: [message], usage: { input_tokens: inputTokens, input_tokens_details: { cached_tokens: 0 }, output_tokens: outputTokens, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: inputTokens + outputTokens } };
    if (body.store !== false || background) keep(id, { response: background ? response : finished, input: items });
    if (!stream) return json(response);

    let sequence = 0;
    const at = (data: Json) => ({ ...data, sequence_number: sequence++ });
    const inProgress = { ...response, status: "in_progress", output: [], usage: null };
    const events: string[] = [
      sse("response.created", at({ response: inProgress })),
      sse("response.in_progress", at({ response: inProgress })),
      sse("response.output_item.added", at({ output_index: 0, item: { ...message, status: "in_progress", content: [] } })),
      sse("response.content_part.added", at({ item_id: messageId, output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [], logprobs: [] } })),
    ];
    for (const delta of splitChars(text, pieceSize(text.length, chunkSize, 1))) {
      events.push(sse("response.output_text.delta", at({ item_id: messageId, output_index: 0, content_index: 0, delta, logprobs: [] })));
    }
    events.push(
      sse("response.output_text.done", at({ item_id: messageId, output_index: 0, content_index: 0, text, logprobs: [] })),
      sse("response.content_part.done", at({ item_id: messageId, output_index: 0, content_index: 0, part: message.content[0] })),
      sse("response.output_item.done", at({ output_index: 0, item: message })),
      sse(incomplete ? "response.incomplete" : "response.completed", at({ response: finished })),
    );
    return { status: 200, contentType: "text/event-stream; charset=utf-8", body: replyBody(events) };
  }

  return async function responses(request: ForwardRequest): Promise<ForwardReply> {
    const url = new URL(request.path, "http://echo.invalid");
    const [, collection, rawId, action] = url.pathname.split("/");
    if (collection !== "responses") throw providerError(name, { status: 404, message: `Unknown path ${url.pathname}` });
    if (rawId === undefined) return create(JSON.parse(request.body ?? "{}") as Json, request.stream);
    const id = decodedId(rawId);
    const entry = id === undefined ? undefined : kept.get(id);
    if (id === undefined || !entry) throw notFound(id ?? rawId);
    const { response } = entry;
    if (request.method === "DELETE") {
      kept.delete(id);
      return json({ id, object: "response", deleted: true });
    }
    if (action === "cancel") {
      if (response.background !== true) throw providerError(name, { status: 400, message: "Only background responses can be cancelled." });
      if (response.status === "queued" || response.status === "in_progress") entry.response = { ...response, status: "cancelled" };
      return json(entry.response);
    }
    if (action === "input_items") {
      const order = url.searchParams.get("order") === "asc" ? "asc" : "desc";
      const limit = Math.min(100, Math.max(1, Number(url.searchParams.get("limit") ?? 20) || 20));
      const all = order === "asc" ? entry.input : [...entry.input].reverse();
      const after = url.searchParams.get("after");
      const start = after ? all.findIndex((item) => item.id === after) + 1 : 0;
      const data = all.slice(start, start + limit);
      return json({ object: "list", data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: start + limit < all.length });
    }
    // A retrieve: a queued background response has run by now.
    if (response.status === "queued") {
      const created = create({ ...response, input: entry.input, background: false, store: false }, false);
      const done = JSON.parse(await created.body.text()) as Json;
      entry.response = { ...done, id, background: true, created_at: response.created_at };
    }
    return json(entry.response);
  };
}
