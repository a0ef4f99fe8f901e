/**
 * What makes a chat stream whole (README "Errors"), for both ways a stream reaches the core (the
 * relay of an OpenAI-format body, and a provider's items): every event is a
 * `chat.completion.chunk`, and each of the request's `n` choices gets its `finish_reason` before
 * the stream ends. An event that is not a chunk (not JSON, `null`, `{"foo":1}`, an object cut
 * short, a choice the request did not ask for) is unreadable: a provider failure, never passed on.
 * A stream that ends before each choice has its finish reason was cut off mid-answer: the client
 * gets the stream's error event, and nothing is stored.
 *
 * Each event is parsed with `JSON.parse`: a text check that is truly safe costs most of a parse,
 * and only a parse makes sure the client (whose SDK parses every event) never gets one it cannot
 * read. The event's text is still what the client gets; the parsed chunk tells the core what it
 * needs: its choices' indexes and finish reasons, its usage, whether it has `service_tier`, and
 * it is what `store: true` assembles.
 */
import { upstreamError, type ModelmuxError } from "../errors.ts";
import type { ChatCompletionChunk, ChatRequest, Usage } from "../types/chat.ts";
import { findExcessNestingInText } from "../utils/json-nesting.ts";

/**
 * How many choices a stream of `request` must finish: its `n`, and one for `n: 0` (which the
 * schema allows) as for no `n` at all.
 */
export function choiceCount(request: Pick<ChatRequest, "n">): number {
  return Math.max(1, request.n ?? 1);
}

/** 502 for an event that is not a chunk. The event is not quoted: it is the upstream's data, not ours to echo. */
export function unreadableEvent(provider: string): ModelmuxError {
  return upstreamError(`${provider}: the upstream sent a stream event that is not a chat.completion.chunk.`);
}

/** 502 for a stream that ended before each of its `choices` choices had a finish reason. */
export function unfinishedStream(provider: string, finishes: number, choices: number): ModelmuxError {
  const which = choices > 1 ? `finish_reason for ${finishes} of ${choices} choices` : "no finish_reason";
  return upstreamError(`${provider}: the upstream stream ended before the answer was complete (${which}).`);
}

/**
 * An event's data parsed, or undefined when it is not JSON (`JSON.parse` never returns undefined).
 * With `maxDepth` (a stream kept for `store: true`), data nested deeper is unreadable too: it would
 * be serialised again when stored, and far deeper than any chunk needs it could not be.
 */
export function parseEventData(data: string, maxDepth?: number): unknown {
  if (maxDepth !== undefined && findExcessNestingInText(data, maxDepth) !== undefined) return undefined;
  try {
    return JSON.parse(data) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * True for a parsed event that may report an error rather than carry a chunk: anything that is not
 * an object with a `choices` array, and a chunk with an `error` key (as some gateways add to a
 * chunk that ends a stream). Only these are shown to a provider's `errorOf`.
 */
export function mayBeError(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return true;
  const chunk = value as { choices?: unknown; error?: unknown };
  return !Array.isArray(chunk.choices) || chunk.error !== undefined;
}

/** What a stream's chunks do besides being checked: the client's choices and the core's callbacks. */
export interface ChunkCheckOptions {
  /** The provider's name, for the errors of an unreadable or unfinished stream. */
  provider: string;
  /** How many choices must finish: `choiceCount(request)`. Default 1. */
  choices?: number;
  /** The client asked for `stream_options.include_usage`: the usage chunk is relayed, not dropped. */
  includeUsage: boolean;
  /** The client set `service_tier`; otherwise it is removed from chunks (README "Endpoints"). */
  keepServiceTier: boolean;
  /** Called with each usage the stream reports (the last one counts). */
  onUsage?: ((usage: Usage) => void) | undefined;
  /** Sees every chunk, the usage chunk included, once it passed the checks (`store: true` assembles them). */
  collect?: ((chunk: ChatCompletionChunk) => void) | undefined;
  /** Called once, at the first chunk with content (`carriesContent`): what commits a stream to its client (`first-content.ts`). */
  onContent?: (() => void) | undefined;
}

/** A delta's field that is the answer's text once it is a non-empty string. */
const TEXT_FIELDS = ["content", "refusal", "reasoning_content", "reasoning"] as const;

/**
 * Whether a choice of a chunk carries content: text, a refusal or reasoning, a tool or function
 * call, audio, or a finish reason. A role alone, an empty text or an empty delta does not.
 */
export function carriesContent(choice: object): boolean {
  const { delta, finish_reason: reason } = choice as { delta?: unknown; finish_reason?: unknown };
  if (typeof reason === "string" && reason !== "") return true;
  if (typeof delta !== "object" || delta === null) return false;
  const fields = delta as Record<string, unknown>;
  for (const name of TEXT_FIELDS) {
    const text = fields[name];
    if (typeof text === "string" && text !== "") return true;
  }
  const { tool_calls: calls, function_call: call, audio } = fields;
  return (Array.isArray(calls) && calls.length > 0) || (typeof call === "object" && call !== null) || (typeof audio === "object" && audio !== null);
}

/** `ChunkCheck.take`: drop the chunk's text (the usage chunk, for a client that did not ask for it). */
export const DROP = 0;
/** `ChunkCheck.take`: relay the chunk's text as it is. */
export const RELAY = 1;
/** `ChunkCheck.take`: relay the chunk's text without its `service_tier` (the client did not set one). */
export const RELAY_WITHOUT_TIER = 2;
/** What to do with a chunk's text. */
export type ChunkUse = typeof DROP | typeof RELAY | typeof RELAY_WITHOUT_TIER;

/**
 * Follows one stream's chunks: checks each, remembers which choices have finished, reports the
 * usage and hands each chunk to `collect`. One per stream.
 */
export class ChunkCheck {
  /** How many distinct choices have had their finish reason. */
  finishes = 0;
  /** The usage came after the last finish reason: the stream is complete, nothing more is needed. */
  complete = false;
  /** Some chunk so far carried content (`carriesContent`). */
  content = false;
  readonly choices: number;
  /** A flag per choice index: it has had its finish reason (a repeated one counts once). */
  private readonly finishedChoices: Uint8Array;

  constructor(private readonly options: ChunkCheckOptions) {
    this.choices = options.choices ?? 1;
    this.finishedChoices = new Uint8Array(this.choices);
  }

  /** Every choice has had its finish reason. */
  get finished(): boolean {
    return this.finishes >= this.choices;
  }

  /**
   * Takes one parsed event (`parseEventData`, or a provider's chunk object) and says what to do
   * with its text. Throws 502 `upstream_error` when it is not a chunk: not an object with a
   * `choices` array of objects whose `index` is one of the request's choices, or with a `usage`
   * that is neither an object nor null; and whatever `collect` throws.
   */
  take(value: unknown): ChunkUse {
    const { options } = this;
    if (typeof value !== "object" || value === null) throw unreadableEvent(options.provider);
    const chunk = value as ChatCompletionChunk;
    const list: unknown = chunk.choices;
    if (!Array.isArray(list)) throw unreadableEvent(options.provider);
    let content = false;
    for (let i = 0; i < list.length; i++) {
      this.takeChoice(list[i]);
      if (!this.content && !content) content = carriesContent(list[i] as object);
    }
    const usage: unknown = chunk.usage;
    let use: ChunkUse = RELAY;
    if (usage !== undefined && usage !== null) {
      if (typeof usage !== "object" || Array.isArray(usage)) throw unreadableEvent(options.provider);
      options.onUsage?.(usage as Usage);
      if (this.finished) this.complete = true;
      if (list.length === 0 && !options.includeUsage) use = DROP;
    }
    options.collect?.(chunk);
    // Only a chunk that passed every check is content: one that throws is not sent.
    if (content) {
      this.content = true;
      options.onContent?.();
    }
    if (use === RELAY && !options.keepServiceTier && chunk.service_tier !== undefined) use = RELAY_WITHOUT_TIER;
    return use;
  }

  /** At the stream's end (`[DONE]` or the body's end): throws 502 `upstream_error` unless `finished`. */
  end(): void {
    if (!this.finished) throw unfinishedStream(this.options.provider, this.finishes, this.choices);
  }

  private takeChoice(choice: unknown): void {
    if (typeof choice !== "object" || choice === null) throw unreadableEvent(this.options.provider);
    const { finish_reason: reason } = choice as { index?: unknown; finish_reason?: unknown };
    // A server that streams one choice may leave its index out: it can only be choice 0.
    const index = (choice as { index?: unknown }).index ?? (this.choices === 1 ? 0 : undefined);
    // An integer within `n`: `>>> 0` keeps only whole numbers from 0 to 2^32 - 1 as they are.
    if (typeof index !== "number" || index >>> 0 !== index || index >= this.choices) throw unreadableEvent(this.options.provider);
    if (typeof reason === "string" && reason !== "" && this.finishedChoices[index] === 0) {
      this.finishedChoices[index] = 1;
      this.finishes++;
    }
  }
}
