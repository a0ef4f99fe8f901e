/**
 * The echo's responses, kept in memory so they can be retrieved, resumed, cancelled, deleted,
 * listed (`input_items`), chained (`previous_response_id`) and referred to (`item_reference`).
 * Bounded (README, "Bounds"): the newest `MAX_KEPT_RESPONSES`, and at most `MAX_KEPT_CHARS` of
 * request bodies in all; the oldest go first. The newest one is kept whatever its size.
 */
import type { JsonObject } from "@modelmux/core";
import { MAX_KEPT_CHARS, MAX_KEPT_RESPONSES } from "./bounds.ts";
import type { EchoTurn, ResponseState } from "./responses-output.ts";

type Json = JsonObject;

/** One kept response. */
export interface KeptResponse {
  /** The request's fields, without its `input`: what the `Response` echoes back. */
  body: Json;
  /** Its status, which a background response's polls and a cancel change. */
  state: ResponseState;
  /** The input items, each with an id. */
  input: Json[];
  /** What the echo model answers, worked out at create (it is a pure function of the request). */
  turn: EchoTurn;
  /** Characters it counts against `MAX_KEPT_CHARS`: its request body's. */
  size: number;
}

export interface ResponseStore {
  get(id: string): KeptResponse | undefined;
  keep(entry: KeptResponse): void;
  delete(id: string): boolean;
  /**
   * The items of the conversation that `id` ends, oldest first: each response of the
   * `previous_response_id` chain with its input and, once it has run, its output. The chain stops
   * at a response no longer kept.
   */
  conversation(id: string): Json[];
  /** An input or output item of a kept response, by its id. */
  item(id: string): Json | undefined;
}

/** The items a kept response contributes to a conversation. */
function itemsOf(entry: KeptResponse): Json[] {
  return entry.state.turn ? [...entry.input, ...entry.state.turn.output] : entry.input;
}

export function createResponseStore({ maxResponses = MAX_KEPT_RESPONSES, maxChars = MAX_KEPT_CHARS } = {}): ResponseStore {
  const kept = new Map<string, KeptResponse>();
  const items = new Map<string, Json>();
  let chars = 0;

  function forget(id: string): boolean {
    const entry = kept.get(id);
    if (!entry) return false;
    kept.delete(id);
    chars -= entry.size;
    // An id a client reused in a newer response now names that response's item: leave it.
    for (const item of [...entry.input, ...entry.turn.output]) if (items.get(item.id as string) === item) items.delete(item.id as string);
    return true;
  }

  return {
    get: (id) => kept.get(id),
    delete: forget,
    keep(entry) {
      kept.set(entry.state.id, entry);
      chars += entry.size;
      for (const item of [...entry.input, ...entry.turn.output]) if (typeof item.id === "string") items.set(item.id, item);
      for (const oldest of kept.keys()) {
        if (kept.size <= 1 || (kept.size <= maxResponses && chars <= maxChars)) break;
        forget(oldest);
      }
    },
    conversation(id) {
      const chain: Json[][] = [];
      // Bounded by the number kept: every step is to another kept response, and ids are never reused.
      for (let entry = kept.get(id); entry && chain.length < maxResponses; entry = kept.get(entry.state.previousResponseId ?? "")) chain.push(itemsOf(entry));
      return chain.reverse().flat();
    },
    item: (id) => items.get(id),
  };
}
