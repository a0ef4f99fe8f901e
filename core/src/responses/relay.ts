/**
 * Relaying a forwarded reply (the responses API, docs/interface.md "Responses API") to the client byte for byte: a JSON
 * body as received (`readReplyBytes`); an SSE body read by read as it arrives, never parsed or
 * re-serialised (`openSseRelay`).
 *
 * Four things are still seen on the way, at almost no cost:
 * - Event boundaries (`SseBlocks`): only whole events are passed on, so when the upstream breaks
 *   off mid-event the client never gets half an event glued to our error event.
 * - The first event: the reply's headers wait for it, so a failure before it is an error reply. A
 *   comment (`: keep-alive`) is not an event: it neither ends the call's whole-wait timeout nor
 *   sends the headers; it goes out with the first event.
 * - The last event, kept as a slice and read once at the end: a stream is whole only when it is
 *   terminal (`response.completed`, `.incomplete`, `.failed`, or `error`; a `[DONE]` after it
 *   aside). Without it the client gets the error event, as for a break. Its usage is read for rate
 *   limits and logs. Only that one event's fields are parsed, by eventsource-parser (`lastEventOf`).
 * - Sizes: a JSON body, or one event, may not outgrow `server.upstream_body_limit` (the body's
 *   `bufferLimit`); the stream as a whole is not limited.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { ModelmuxError, upstreamError } from "../errors.ts";
import type { HttpBody } from "../upstream/client.ts";
import { hasData, lastDataEvent, sseBlocksOf, type SseBlocks } from "../sse/blocks.ts";
import { responsesErrorFrame } from "../sse/tail.ts";
import type { Usage } from "../types/chat.ts";
import { bufferLimitOf, UpstreamBodyTooLarge } from "../upstream/body-limit.ts";
import type { SseFrame } from "../sse/write.ts";
import { usageOfEventData } from "./usage.ts";

/** The types of the events that end a responses stream (the openai SDK's `ResponseStreamEvent`). */
const TERMINAL_TYPES = new Set(["response.completed", "response.incomplete", "response.failed", "error"]);
/** An event's data as OpenAI writes it: its type first. */
const LEADING_TYPE = /^\{"type":"([^"]*)"/;

/** What `lastEvents` last dispatched. */
let parsed: EventSourceMessage | undefined;

function keepParsed(event: EventSourceMessage): void {
  parsed = event;
}

/**
 * One parser for every stream's last event, made once (not one per stream): it is fed one event
 * at a time, dispatches it synchronously and is reset at once, so no state passes from one stream
 * to the next. No `maxBufferSize`: the event is already in memory, and the parser holds nothing
 * of it after.
 */
const lastEvents = createParser({ onEvent: keepParsed });

/**
 * The fields of one SSE event (`lastDataEvent`'s bytes): its `event` name and its `data`, several
 * lines joined. The stream's bytes are relayed unparsed; this one event is all that is parsed.
 */
function lastEventOf(event: Buffer): EventSourceMessage | undefined {
  parsed = undefined;
  lastEvents.feed(event.toString("utf8"));
  // Ends the event if its own blank line is missing, or is a lone CR the parser waits on to see
  // whether an LF follows; after a whole event it dispatches nothing.
  lastEvents.feed("\n\n");
  lastEvents.reset();
  const fields = parsed;
  parsed = undefined;
  return fields;
}

/** The `type` of an event's JSON data, or undefined. */
function typeOf(data: string): string | undefined {
  const leading = LEADING_TYPE.exec(data);
  if (leading) return leading[1];
  try {
    const type = (JSON.parse(data) as { type?: unknown } | null)?.type;
    return typeof type === "string" ? type : undefined;
  } catch {
    return undefined;
  }
}

/** The usage carried by one SSE event's bytes, when it is a terminal responses event. */
export function usageOfEvent(event: Buffer | undefined): Usage | undefined {
  const data = event === undefined ? undefined : lastEventOf(event)?.data;
  return data === undefined ? undefined : usageOfEventData(data);
}

/** How a stream ended: whether its last event (not `[DONE]`) is terminal, and that event's usage. */
export function endOfStream(last: Buffer | undefined): { terminal: boolean; usage: Usage | undefined } {
  const fields = last === undefined ? undefined : lastEventOf(last);
  if (fields === undefined) return { terminal: false, usage: undefined };
  const { event, data } = fields;
  const type = typeOf(data);
  return { terminal: event === "error" || (type !== undefined && TERMINAL_TYPES.has(type)), usage: usageOfEventData(data) };
}

export interface RelayOptions {
  /** The provider's name, for the error of a stream that ends without its terminal event. */
  provider: string;
  /** Maps a failure while reading the upstream body (504 on a stall, 502 on a break). */
  classify(error: unknown): unknown;
  /** True once the client has gone: stop reading, send nothing more. */
  clientGone(): boolean;
  /** Called once when the stream ends well (with its terminal event), with that event's usage when it has one. */
  onEnd(usage: Usage | undefined): void;
  /** Called once when the upstream failed mid-stream; an error event has been sent. */
  onError(error: unknown): void;
}

/**
 * Reads a forwarded JSON reply's bytes as they came, whole within the call's timeout. One past
 * the body's `bufferLimit` stops the read, destroys the body (which cancels its request) and
 * throws an `UpstreamBodyTooLarge`; an upstream body (`bytes()`) that declares a larger
 * `content-length` is refused before it is read.
 */
export async function readReplyBytes(body: HttpBody): Promise<Buffer> {
  if (body.bytes) return body.bytes();
  const limit = bufferLimitOf(body);
  const chunks: Buffer[] = [];
  let size = 0;
  // A whole reply: the call's timeout bounds all of it, not only its first chunk.
  body.keepDeadline?.();
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    // Leaving the loop by a throw destroys the body.
    if (size > limit) throw new UpstreamBodyTooLarge(limit, "reply");
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
}

/** An upstream SSE body read as blocks of whole events, and the last event seen that carries data. */
class EventBlocks {
  readonly reader: AsyncIterator<Buffer>;
  private readonly blocks: SseBlocks;
  /** The last whole event that carried data other than `[DONE]`. */
  last: Buffer | undefined;

  constructor(body: HttpBody) {
    this.reader = (body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    this.blocks = sseBlocksOf(body);
    // The first event, not the first chunk, ends the call's whole-wait timeout (`openSseRelay`).
    body.keepDeadline?.();
  }

  /**
   * Adds one read of the body: the events it completes, or undefined. Throws an
   * `UpstreamBodyTooLarge` for an event past the limit.
   */
  add(chunk: Buffer): Buffer | undefined {
    const block = this.blocks.push(chunk);
    if (block !== undefined) {
      const event = lastDataEvent(block);
      if (event !== undefined) this.last = event;
    }
    return block;
  }

  /** The body ended: the held bytes when they are only the last block's trailing LF (`SseBlocks.end`). */
  end(): Buffer | undefined {
    return this.blocks.end();
  }

  /**
   * Reads up to the first block that carries an event; comments before it go out with it, and
   * count towards the limit. A body that ends first carried no events: a 502.
   */
  async first(provider: string): Promise<Buffer> {
    let before: Buffer[] | undefined;
    let size = 0;
    for (;;) {
      const step = await this.reader.next();
      if (step.done === true) throw upstreamError(`${provider}: the reply to a streamed request carried no events.`);
      const block = this.add(step.value);
      if (block === undefined) continue;
      if (hasData(block)) return before === undefined ? block : Buffer.concat([...before, block]);
      size += block.length;
      if (size > this.blocks.limit) throw new UpstreamBodyTooLarge(this.blocks.limit, "event");
      (before ??= []).push(block);
    }
  }
}

/**
 * Opens the relay of an upstream SSE body: reads until its first event (a comment is not one)
 * before returning, so that a failure before any event (a stall past the call's timeout, an event
 * past the limit, a break, an end without events) is thrown, classified, and becomes an error
 * reply with its status. The frames that follow are the body's bytes in whole events and, if it
 * fails later or ends without its terminal event, one error event; they never throw, and ending
 * them early (`return()`) destroys the upstream body.
 */
export async function openSseRelay(body: HttpBody, options: RelayOptions): Promise<AsyncGenerator<SseFrame>> {
  const events = new EventBlocks(body);
  let first: Buffer;
  try {
    first = await events.first(options.provider);
  } catch (error) {
    if (!body.destroyed) body.destroy();
    throw options.classify(error);
  }
  // The first event is here: from now on the call's timeout bounds each gap, not the whole reply.
  body.markStreaming?.();
  return relayFrames(body, events, first, options);
}

/** 502 for a stream that ended cleanly before its terminal event: it was cut off mid-answer. */
function unfinishedResponse(provider: string): ModelmuxError {
  return upstreamError(
    `${provider}: the upstream stream ended before its terminal event (response.completed, response.incomplete, response.failed or error): the response was cut off.`,
  );
}

async function* relayFrames(body: HttpBody, events: EventBlocks, first: Buffer, options: RelayOptions): AsyncGenerator<SseFrame> {
  try {
    if (options.clientGone()) return;
    yield first;
    // One await per read, on the body itself; cutting it into events is synchronous.
    for (;;) {
      const step = await events.reader.next();
      if (step.done === true) break;
      const block = events.add(step.value);
      if (block === undefined) continue;
      if (options.clientGone()) return;
      yield block;
    }
    // An event cut off before its blank line is dropped, as the SSE spec says; a trailing LF is not one.
    const rest = events.end();
    if (rest !== undefined && !options.clientGone()) yield rest;
    const end = endOfStream(events.last);
    if (!end.terminal) throw unfinishedResponse(options.provider);
    options.onEnd(end.usage);
  } catch (error) {
    if (options.clientGone()) return;
    const mapped = options.classify(error);
    options.onError(mapped);
    yield responsesErrorFrame(mapped instanceof ModelmuxError ? mapped : upstreamError("the upstream stream failed", error));
  } finally {
    if (!body.destroyed) body.destroy();
  }
}
