/**
 * Reading Server-Sent Events from an upstream reply body, for provider plugins. Parsing is done by
 * eventsource-parser on the Node Readable directly: no web streams.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";

export type { EventSourceMessage };

/** A single SSE event may not grow past this; a provider that streams more is broken. */
const MAX_EVENT_BYTES = 8 * 1024 * 1024;

/**
 * Yields each event of an SSE body as it arrives.
 * @example
 * for await (const { event, data } of readSseEvents(res.body)) if (data !== "[DONE]") handle(JSON.parse(data));
 */
export async function* readSseEvents(body: Readable): AsyncGenerator<EventSourceMessage> {
  const pending: EventSourceMessage[] = [];
  let parseError: Error | undefined;
  const parser = createParser({
    maxBufferSize: MAX_EVENT_BYTES,
    onEvent: (message) => pending.push(message),
    onError: (error) => {
      if (error.type === "max-buffer-size-exceeded") parseError = error;
    },
  });
  // undici's body overrides setEncoding without decoding, so decode here; StringDecoder keeps a
  // multi-byte character that is split across two chunks whole.
  const decoder = new StringDecoder("utf8");
  for await (const chunk of body as AsyncIterable<Buffer | string>) {
    parser.feed(typeof chunk === "string" ? chunk : decoder.write(chunk));
    if (parseError) throw parseError;
    for (let i = 0; i < pending.length; i++) yield pending[i]!;
    pending.length = 0;
  }
  // As the SSE spec says, an event cut off before its blank line is dropped, not guessed at.
}
