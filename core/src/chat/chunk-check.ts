/**
 * What makes a chat stream whole (README "Errors"): every event is a `chat.completion.chunk`, and
 * every choice has its `finish_reason` before the stream ends. An event that is not a chunk (not
 * JSON, `null`, `{"foo":1}`, an object cut short) is unreadable: a provider failure, never passed
 * on. A stream that ends without a finish reason for each choice, with or without `[DONE]`, was cut
 * off mid-answer: the client gets the stream's error event, and nothing is stored.
 *
 * Chunks mostly arrive as JSON text that the core passes on without parsing (parsing costs more
 * than the rest of the relay's work per chunk), so these checks read the text: a few character
 * tests per event, and one regex search for finish reasons. Only an event that fails the quick
 * test is parsed, to tell an odd but valid chunk (blank around the object, a value before the
 * `choices` key that ends in "choices") from an unreadable one.
 */
import { upstreamError, type ModelmuxError } from "../errors.ts";
import type { ChatCompletionChunk } from "../types/chat.ts";
import { EMPTY_CHOICES } from "./usage-chunk.ts";

/**
 * A `finish_reason` with a value (a non-empty string: `null` is "not yet"). Only a key matches:
 * inside a string value the quotes would be escaped, and `native_finish_reason` has no quote
 * before `finish`. Global, for counting; use it through `countFinishReasons` or a copy of its own.
 */
export const FINISH_REASON = /"finish_reason"\s*:\s*"[^"]/g;

/** A usage object, in a chunk that `EMPTY_CHOICES` matched (`"usage": null` is none). */
const USAGE_OBJECT = /"usage"\s*:\s*\{/;

const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const COLON = 58;
const QUOTE = 34;
const LETTER_C = 99;

function isBlank(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 13;
}

/**
 * The quick test: `text[from, to)` is an object (`{` … `}`) whose first `choices"` is a key
 * holding an array. True for every chunk as OpenAI and compatible servers write them; false for
 * anything else, and for a few odd chunks that `isChunkText` then parses.
 */
function looksLikeChunk(text: string, from: number, to: number): boolean {
  if (text.charCodeAt(from) !== OPEN_BRACE || text.charCodeAt(to - 1) !== CLOSE_BRACE) return false;
  // Searched without its leading quote: a search for a string that starts with `"` stops at every quote.
  const at = text.indexOf('hoices"', from);
  if (at < 0 || at >= to || text.charCodeAt(at - 1) !== LETTER_C || text.charCodeAt(at - 2) !== QUOTE) return false;
  let i = at + 7;
  while (isBlank(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== COLON) return false;
  i++;
  while (isBlank(text.charCodeAt(i))) i++;
  return text.charCodeAt(i) === OPEN_BRACKET && i < to;
}

/** The exact test, for what the quick one refused: JSON of an object with a `choices` array. */
function parsesAsChunk(json: string): boolean {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return false;
  }
  return isChunkObject(value);
}

/** True for an object with a `choices` array (a chunk, as far as the router reads it). */
export function isChunkObject(value: unknown): value is ChatCompletionChunk {
  return typeof value === "object" && value !== null && Array.isArray((value as { choices?: unknown }).choices);
}

/**
 * True when `text[from, to)` (one event's data) is the JSON of a chunk: an object with a `choices`
 * array. Cheap for a chunk; parses only text that is not plainly one.
 */
export function isChunkText(text: string, from = 0, to = text.length): boolean {
  return looksLikeChunk(text, from, to) || parsesAsChunk(from === 0 && to === text.length ? text : text.slice(from, to));
}

/** How many choices of a chunk's JSON text carry their `finish_reason`. */
export function countFinishReasons(json: string): number {
  FINISH_REASON.lastIndex = 0;
  let count = 0;
  while (FINISH_REASON.exec(json) !== null) count++;
  return count;
}

/** How many choices of a chunk object carry their `finish_reason`. */
export function countObjectFinishReasons(chunk: ChatCompletionChunk): number {
  let count = 0;
  for (let i = 0; i < chunk.choices.length; i++) if (chunk.choices[i]?.finish_reason) count++;
  return count;
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

/** Follows one stream given as the JSON text of its events; see `createChunkCheck`. */
export interface ChunkCheck {
  /**
   * Checks one event's data (not `[DONE]`, not an error payload): throws 502 `upstream_error` when it
   * is not a chunk. True when this event completes the stream: a usage chunk (`choices: []` with a
   * `usage` object) after every choice's finish reason; nothing more needs to be read.
   */
  event(data: string): boolean;
  /** Every choice has had its finish reason. */
  readonly finished: boolean;
  /** At the stream's end (`[DONE]` or the body's end): throws 502 `upstream_error` unless `finished`. */
  end(): void;
}

/**
 * The integrity rules above for a provider plugin that reads an OpenAI-format stream itself (the
 * core applies them again to whatever a plugin hands over). `choices` is the request's `n`.
 * @example
 * const check = createChunkCheck(ctx.name, request.n ?? 1);
 * for await (const { data } of readSseEvents(body)) {
 *   if (data === "[DONE]") break;
 *   const complete = check.event(data);
 *   yield data;
 *   if (complete) return;
 * }
 * check.end();
 */
export function createChunkCheck(provider: string, choices = 1): ChunkCheck {
  let finishes = 0;
  return {
    event(data) {
      if (!isChunkText(data)) throw unreadableEvent(provider);
      finishes += countFinishReasons(data);
      return finishes >= choices && EMPTY_CHOICES.test(data) && USAGE_OBJECT.test(data);
    },
    get finished() {
      return finishes >= choices;
    },
    end() {
      if (finishes < choices) throw unfinishedStream(provider, finishes, choices);
    },
  };
}
