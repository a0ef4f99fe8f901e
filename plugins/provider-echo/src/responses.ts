/**
 * The echo model behind the Responses API, so `/v1/responses` works offline (`responses.provider:
 * echo`). It answers the forwarded calls as OpenAI's API would, in its wire format: a create (JSON
 * or events, `responses-events.ts`), retrieve (JSON, or the events again with `?stream=true`),
 * delete, cancel and input_items. The answer follows the chat rules (`reply.ts`): the request is
 * read as a chat request (`responses-request.ts`), answered as a new turn (no prefill: the
 * Responses API has none), and the plan written as a `Response`
 * (`responses-output.ts`). Responses are kept in memory, bounded (`responses-store.ts`); a
 * `background: true` response is `queued` when created, `in_progress` at its first poll and done
 * from its second on, unless cancelled first (README, "Responses API").
 */
import { providerError, replyBody, type ForwardReply, type ForwardRequest, type JsonObject } from "@modelmux/core";
import { answerPlan } from "./reply.ts";
import { responseEvents, sseText } from "./responses-events.ts";
import { responseObject, turnOf } from "./responses-output.ts";
import { echoId, inputItems, itemsToMessages, toChatRequest } from "./responses-request.ts";
import { createResponseStore, type KeptResponse } from "./responses-store.ts";

type Json = JsonObject;

export interface EchoResponsesOptions {
  /** Provider name, for error messages. */
  name: string;
  prefix: string;
  chunkSize: number;
}

/** The id in a forwarded path, undefined when its percent-encoding is broken (no kept id has such a name). */
function decodedId(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

const json = (value: unknown): ForwardReply => ({ status: 200, contentType: "application/json", body: replyBody([JSON.stringify(value)]) });

/** The response has not run yet: a background one, queued or in progress. */
const pending = (entry: KeptResponse) => entry.state.status === "queued" || entry.state.status === "in_progress";

/** Runs a pending response: it gets the turn worked out when it was created. */
function run(entry: KeptResponse): void {
  entry.state = { ...entry.state, status: entry.turn.status, turn: entry.turn };
}

/** `starting_after` of a resumed stream: the events after that sequence number; all of them without it. */
function startingAfter(url: URL): number {
  const value = Number(url.searchParams.get("starting_after") ?? "");
  return url.searchParams.has("starting_after") && Number.isInteger(value) ? value : -1;
}

export function createEchoResponses({ name, prefix, chunkSize }: EchoResponsesOptions) {
  const store = createResponseStore();
  const notFound = (id: string) => providerError(name, { status: 404, message: `No response found with id '${id}'.`, param: "response_id" });
  const objectOf = (entry: KeptResponse) => responseObject(entry.body, entry.state);
  const events = (entry: KeptResponse, after = -1): ForwardReply => ({
    status: 200,
    contentType: "text/event-stream; charset=utf-8",
    body: replyBody(sseText(responseEvents(objectOf(entry), chunkSize), after)),
  });

  function create(body: Json, size: number, stream: boolean): ForwardReply {
    const previous = typeof body.previous_response_id === "string" ? body.previous_response_id : null;
    if (previous !== null && !store.get(previous)) throw providerError(name, { status: 400, message: `Previous response with id '${previous}' not found.`, param: "previous_response_id" });
    const input = inputItems(body.input);
    const history = previous === null ? [] : store.conversation(previous);
    const request = toChatRequest(body, itemsToMessages([...history, ...input], store.item));
    const turn = turnOf(answerPlan(request, prefix));
    const background = body.background === true;
    const state = { id: echoId("resp"), createdAt: Math.floor(Date.now() / 1000), status: background ? "queued" : turn.status, background, previousResponseId: previous };
    const { input: _input, ...settings } = body;
    const entry: KeptResponse = { body: settings, state: background ? state : { ...state, turn }, input, turn, size };
    if (body.store !== false || background) store.keep(entry);
    if (!stream) return json(objectOf(entry));
    // A streamed response runs while it streams, in the background or not.
    run(entry);
    return events(entry);
  }

  function cancel(entry: KeptResponse): ForwardReply {
    if (!entry.state.background) throw providerError(name, { status: 400, message: "Only background responses can be cancelled." });
    if (pending(entry)) entry.state = { ...entry.state, status: "cancelled" };
    return json(objectOf(entry));
  }

  function listInputItems(entry: KeptResponse, url: URL): ForwardReply {
    const order = url.searchParams.get("order") === "asc" ? "asc" : "desc";
    const limit = Math.min(100, Math.max(1, Number(url.searchParams.get("limit") ?? 20) || 20));
    const all = order === "asc" ? entry.input : [...entry.input].reverse();
    const after = url.searchParams.get("after");
    const start = after ? all.findIndex((item) => item.id === after) + 1 : 0;
    const data = all.slice(start, start + limit);
    return json({ object: "list", data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: start + limit < all.length });
  }

  /** A retrieve. A poll moves a background response on one step (queued → in_progress → done); a resumed stream runs it. */
  function retrieve(entry: KeptResponse, url: URL, stream: boolean): ForwardReply {
    if (stream) {
      if (pending(entry)) run(entry);
      return events(entry, startingAfter(url));
    }
    if (entry.state.status === "queued") entry.state = { ...entry.state, status: "in_progress" };
    else if (entry.state.status === "in_progress") run(entry);
    return json(objectOf(entry));
  }

  return async function responses(request: ForwardRequest): Promise<ForwardReply> {
    const url = new URL(request.path, "http://echo.invalid");
    const [, collection, rawId, action] = url.pathname.split("/");
    if (collection !== "responses") throw providerError(name, { status: 404, message: `Unknown path ${url.pathname}` });
    if (rawId === undefined) return create(JSON.parse(request.body ?? "{}") as Json, request.body?.length ?? 0, request.stream);
    const id = decodedId(rawId);
    const entry = id === undefined ? undefined : store.get(id);
    if (id === undefined || !entry) throw notFound(id ?? rawId);
    if (request.method === "DELETE") {
      store.delete(id);
      return json({ id, object: "response", deleted: true });
    }
    if (action === "cancel") return cancel(entry);
    if (action === "input_items") return listInputItems(entry, url);
    return retrieve(entry, url, request.stream);
  };
}
