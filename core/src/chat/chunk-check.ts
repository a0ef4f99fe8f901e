/**
 * What makes a chat stream whole (README "Errors"): every event is a `chat.completion.chunk`, and
 * every choice has its `finish_reason` before the stream ends. An event that is not a chunk (not
 * JSON, `null`, `{"foo":1}`, an object cut short) is unreadable: a provider failure, never passed
 * on. A stream that ends without a finish reason for each choice, with or without `[DONE]`, was cut
 * off mid-answer: the client gets the stream's error event, and nothing is stored.
 *
 * Chunks mostly arrive as JSON text that the core passes on without parsing (parsing costs more
 * than all the rest of the relay's work per chunk), so `ChunkScanner` reads the text instead: the
 * event is an object (`{` … `}`) with a `"choices"` key holding an array, and the value of its
 * `"finish_reason"` key is a string. Even a native search per event costs more than the relay can
 * spare, and the chunks of one stream share their layout, so the scanner first looks for each key
 * where the previous event had it (`"choices"` at the same distance from the start, and
 * `"finish_reason"` from the end): a few character comparisons. It searches only when that fails,
 * and parses only an event that the text tests refuse, to tell an odd but valid chunk from an
 * unreadable one.
 */
import { upstreamError, type ModelmuxError } from "../errors.ts";
import type { ChatCompletionChunk } from "../types/chat.ts";

/**
 * A `finish_reason` with a value (a non-empty string: `null` is "not yet"). Only a key matches:
 * inside a string value the quotes would be escaped, and `native_finish_reason` has no quote
 * before `finish`. Global, for counting.
 */
const FINISH_REASON = /"finish_reason"\s*:\s*"[^"]/g;

/** A usage object, in a chunk whose choices are empty (`"usage": null` is none). */
const USAGE_OBJECT = /"usage"\s*:\s*\{/;

const CHOICES_KEY = '"choices"';
const FINISH_KEY = '"finish_reason"';
/** The part of `FINISH_KEY` that `keyAt` compares as a string: under 13 characters, which V8 copies instead of making a slice. */
const FINISH_KEY_MIDDLE = "inish_reason";
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const COLON = 58;
const QUOTE = 34;
const LETTER_F = 102;

function isBlank(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 13;
}

/** True when `text` has `"choices"` at `at`, inside `[from, to)`. A short `substring` compared is cheaper than a search or `startsWith`. */
function choicesKeyAt(text: string, at: number, from: number, to: number): boolean {
  return at >= from && at + CHOICES_KEY.length <= to && text.substring(at, at + CHOICES_KEY.length) === CHOICES_KEY;
}

/** True when `text` has `"finish_reason"` at `at`, inside `[from, to)`. */
function finishKeyAt(text: string, at: number, from: number, to: number): boolean {
  return (
    at >= from &&
    at + FINISH_KEY.length <= to &&
    text.charCodeAt(at) === QUOTE &&
    text.charCodeAt(at + 1) === LETTER_F &&
    text.charCodeAt(at + 14) === QUOTE &&
    text.substring(at + 2, at + 14) === FINISH_KEY_MIDDLE
  );
}

/** The position of the value after a key ending before `at` (`:` between blanks), or -1 when no colon follows. */
function valueAfter(text: string, at: number, to: number): number {
  // Compact JSON first: the colon, then the value.
  if (text.charCodeAt(at) === COLON && at + 1 < to && !isBlank(text.charCodeAt(at + 1))) return at + 1;
  while (at < to && isBlank(text.charCodeAt(at))) at++;
  if (at >= to || text.charCodeAt(at) !== COLON) return -1;
  at++;
  while (at < to && isBlank(text.charCodeAt(at))) at++;
  return at < to ? at : -1;
}

/** True for an object with a `choices` array (a chunk, as far as the router reads it). */
export function isChunkObject(value: unknown): value is ChatCompletionChunk {
  return typeof value === "object" && value !== null && Array.isArray((value as { choices?: unknown }).choices);
}

/** How many choices of a parsed chunk carry their `finish_reason`. */
export function countObjectFinishReasons(chunk: ChatCompletionChunk): number {
  let count = 0;
  for (let i = 0; i < chunk.choices.length; i++) if (chunk.choices[i]?.finish_reason) count++;
  return count;
}

/** How many choices of a chunk's JSON text carry their `finish_reason`. */
export function countFinishReasons(json: string): number {
  FINISH_REASON.lastIndex = 0;
  let count = 0;
  while (FINISH_REASON.exec(json) !== null) count++;
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

/**
 * Reads the events of one stream as JSON text: whether each is a chunk, whether its choices are
 * empty (the usage chunk is one such), and how many finish reasons came. One per stream: it
 * remembers where the previous event had its keys.
 */
export class ChunkScanner {
  /** Finish reasons seen so far. */
  finishes = 0;
  /** The last event scanned is a chunk with empty `choices` (the usage chunk has them). */
  emptyChoices = false;
  /** Where the previous event had `"choices"`, from its start; -1 before one was found. */
  private choicesFromStart = -1;
  /** Where the previous event had `"finish_reason"`, from its end. */
  private finishFromEnd = -1;

  /** `choices` is the request's `n`. */
  constructor(readonly choices = 1) {}

  /** Every choice has had its finish reason. */
  get finished(): boolean {
    return this.finishes >= this.choices;
  }

  /** Reads one event's data, `text[from, to)`: false when it is not a chunk. */
  scan(text: string, from = 0, to = text.length): boolean {
    if (text.charCodeAt(from) !== OPEN_BRACE || text.charCodeAt(to - 1) !== CLOSE_BRACE) return this.parse(text, from, to);
    const list = this.choicesList(text, from, to);
    if (list < 0) return this.parse(text, from, to);
    let at = list;
    while (at < to && isBlank(text.charCodeAt(at))) at++;
    this.emptyChoices = text.charCodeAt(at) === CLOSE_BRACKET;
    if (this.choices > 1) this.finishes += countFinishReasons(from === 0 && to === text.length ? text : text.slice(from, to));
    else if (this.finishAt(text, from, to)) this.finishes++;
    return true;
  }

  /** The position after the `[` of the event's `"choices"` key, or -1 when it has none that the text test sees. */
  private choicesList(text: string, from: number, to: number): number {
    let key = from + this.choicesFromStart;
    if (this.choicesFromStart < 0 || !choicesKeyAt(text, key, from, to)) {
      // Searched without its leading quote: a search for a string that starts with `"` stops at every quote.
      const found = text.indexOf('hoices"', from);
      key = found - 2;
      if (found < 0 || !choicesKeyAt(text, key, from, to)) return -1;
      this.choicesFromStart = key - from;
    }
    const value = valueAfter(text, key + CHOICES_KEY.length, to);
    return value >= 0 && text.charCodeAt(value) === OPEN_BRACKET ? value + 1 : -1;
  }

  /**
   * True when the event's last `"finish_reason"` key holds a string (the only one, with one choice
   * per chunk: the request asked for one).
   */
  private finishAt(text: string, from: number, to: number): boolean {
    let key = to - this.finishFromEnd;
    let value = this.finishFromEnd >= 0 && finishKeyAt(text, key, from, to) ? valueAfter(text, key + FINISH_KEY.length, to) : -1;
    if (value < 0) {
      // Not where the previous event had it: the last key of that name (a token in logprobs may be the text "finish_reason").
      // The event starts with `{`, so a key is never at `from` and `key - 1` stays inside it.
      for (key = text.lastIndexOf(FINISH_KEY, to - FINISH_KEY.length); key > from; key = text.lastIndexOf(FINISH_KEY, key - 1)) {
        value = valueAfter(text, key + FINISH_KEY.length, to);
        if (value >= 0) break;
      }
      if (value < 0) return false;
      this.finishFromEnd = to - key;
    }
    return text.charCodeAt(value) === QUOTE && text.charCodeAt(value + 1) !== QUOTE;
  }

  /** The exact test, for what the text tests refused: JSON of an object with a `choices` array. */
  private parse(text: string, from: number, to: number): boolean {
    let value: unknown;
    try {
      value = JSON.parse(from === 0 && to === text.length ? text : text.slice(from, to));
    } catch {
      return false;
    }
    if (!isChunkObject(value)) return false;
    this.emptyChoices = value.choices.length === 0;
    this.finishes += countObjectFinishReasons(value);
    return true;
  }
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
  const scanner = new ChunkScanner(choices);
  return {
    event(data) {
      if (!scanner.scan(data)) throw unreadableEvent(provider);
      return scanner.emptyChoices && scanner.finished && USAGE_OBJECT.test(data);
    },
    get finished() {
      return scanner.finished;
    },
    end() {
      if (!scanner.finished) throw unfinishedStream(provider, scanner.finishes, choices);
    },
  };
}
