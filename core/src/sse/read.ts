/**
 * Reading Server-Sent Events from an upstream reply body, for provider plugins. The body's reads
 * are cut into whole events (`blocks.ts`, which holds an incomplete event to the limit in
 * bytes), and each block is parsed by eventsource-parser (async iteration only): no web streams.
 */
import { createParser, type EventSourceMessage, type EventSourceParser, type ParseError } from "eventsource-parser";
import type { HttpBody } from "../upstream/client.ts";
import { bufferLimitOf, UpstreamBodyTooLarge } from "../upstream/body-limit.ts";
import { sseBlocksOf } from "./blocks.ts";

export type { EventSourceMessage };

/**
 * An eventsource-parser for the events of `body`, each held to the body's limit (`bufferLimitOf`,
 * `server.upstream_body_limit`): the one way the core makes a parser of upstream events. An event
 * past the limit ends the stream with an `UpstreamBodyTooLarge` (502 naming
 * `server.upstream_body_limit`); other (field) errors are ignored, as the SSE spec says. The
 * parser counts UTF-16 units, never more than the bytes they came from: fed whole events cut by
 * `SseBlocks` (`sseBlocksOf`), which holds an event to the same limit in bytes, it is a backstop
 * that never fires first.
 */
export function createEventParser(body: HttpBody, onEvent: (event: EventSourceMessage) => void): EventSourceParser {
  const limit = bufferLimitOf(body);
  return createParser({ maxBufferSize: limit, onEvent, onError: throwIfTooLarge.bind(limit) });
}

function throwIfTooLarge(this: number, error: ParseError): void {
  if (error.type === "max-buffer-size-exceeded") throw new UpstreamBodyTooLarge(this, "event");
}

/**
 * Yields each event of an SSE body as it arrives. An event over the body's `bufferLimit` (in bytes)
 * ends it with an `UpstreamBodyTooLarge`; once the first event is read (a comment is not one), the
 * call's timeout bounds only the gaps between chunks (`HttpBody.markStreaming`), unless the core
 * holds that bound to its own first chunk (a stream it frames: `provider-call.ts`).
 * @example
 * for await (const { event, data } of readSseEvents(res.body)) if (data !== "[DONE]") handle(JSON.parse(data));
 */
export async function* readSseEvents(body: HttpBody): AsyncGenerator<EventSourceMessage> {
  for await (const batch of readSseEventBatches(body)) for (let i = 0; i < batch.length; i++) yield batch[i]!;
}

/**
 * Yields the events of an SSE body one batch per read: every event completed by one chunk of the
 * body, in order (never an empty batch). For a consumer that handles a read's events together, so
 * that a dozen events cost one async step instead of one each.
 * @example
 * for await (const events of readSseEventBatches(res.body)) for (const { data } of events) handle(data);
 */
export async function* readSseEventBatches(body: HttpBody): AsyncGenerator<EventSourceMessage[]> {
  const pending: EventSourceMessage[] = [];
  // No closures made per body: under tsx every named function made costs a `defineProperty`.
  const parser = createEventParser(body, pending.push.bind(pending));
  const blocks = sseBlocksOf(body);
  // Pulled by hand: `for await` would call `return()`, destroying the body, when the loop is left
  // early; see `release`.
  const chunks: AsyncIterator<Buffer | string> = body[Symbol.asyncIterator]();
  // The first event, not the first chunk, ends the call's whole-wait timeout.
  body.keepDeadline?.();
  // True while a read is awaited and after the body ended or failed: then there is nothing to release.
  let settled = false;
  let started = false;
  try {
    for (;;) {
      settled = true;
      const step = await chunks.next();
      if (step.done === true) break;
      settled = false;
      // A test's Readable may yield strings.
      const chunk = step.value;
      try {
        const block = blocks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
        // Whole events: no multi-byte character straddles the cut.
        if (block !== undefined) parser.feed(wholeLines(block.toString("utf8")));
      } catch (error) {
        // An event outgrew the limit: nothing more is read.
        settled = true;
        body.destroy();
        throw error;
      }
      if (pending.length === 0) continue;
      if (!started) {
        started = true;
        body.markStreaming?.();
      }
      const events = pending.slice();
      pending.length = 0;
      yield events;
    }
    // As the SSE spec says, an event cut off before its blank line is dropped, not guessed at.
  } finally {
    if (!settled) void release(chunks, body);
  }
}

/**
 * Whole events' text for eventsource-parser. A block may end in a lone CR (a CR line end), which
 * the parser keeps until it sees whether an LF follows, so the block's last event would wait for
 * the next read: an LF makes it a CRLF, the same line end. An LF that does follow in the next read
 * is then an empty line, which dispatches nothing.
 */
export function wholeLines(text: string): string {
  return text.charCodeAt(text.length - 1) === 13 ? `${text}\n` : text;
}

/**
 * Lets go of a body whose reader stopped before its end: most often a provider that stops at its
 * last event (`[DONE]`, `message_stop`) when the upstream has already sent everything else too, or
 * is about to (the chunked body's last bytes often come one read later). Destroying a body that is
 * not complete aborts its request, which closes a keep-alive connection, and makes an abort error
 * with its stack trace. So the rest is read and dropped, letting the body end by itself; one that has
 * not ended by the next turn of the event loop (an upstream that keeps sending, a client that left
 * mid-stream) is destroyed then, which also aborts its request. Never rejects.
 */
async function release(chunks: AsyncIterator<unknown>, body: HttpBody): Promise<void> {
  const deadline = setImmediate(destroyBody, body);
  try {
    while ((await chunks.next()).done !== true);
  } catch {
    // It failed, or the deadline destroyed it: released either way.
  } finally {
    clearImmediate(deadline);
  }
}

function destroyBody(body: HttpBody): void {
  body.destroy();
}
