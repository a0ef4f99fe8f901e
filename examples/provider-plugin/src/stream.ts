/**
 * A Parrot SSE reply -> `chat.completion.chunk` objects (the core frames them as SSE and adds
 * `[DONE]`). Parrot's events are not OpenAI chunks, so each is translated:
 *
 *   (first event)  -> a role chunk `{ role: "assistant", content: "" }`
 *   token {text}   -> a content delta
 *   call  {tool, input} -> a tool-call delta with a made-up id and the input as a JSON string
 *   end   {done_reason, tokens} -> a finish chunk, then the usage chunk (`choices: []`)
 *   problem {kind, detail} -> a 502 error: the core ends the client's stream with one error event
 */
import { readSseEvents, toUpstreamError, upstreamError, type ChatChunkChoice, type ChatCompletionChunk, type HttpBody, type Usage } from "@modelmux/core";
import type { ParrotStreamEvents } from "./parrot-api.ts";
import { mapCall, mapDoneReason, mapTokens } from "./response.ts";

export interface ParrotStreamContext {
  /** The configured provider name, for errors. */
  provider: string;
  /** The bare model id, for the chunks' `model`. */
  model: string;
  /** The call's timeout, so a stalled body is reported as the 504 it is. */
  timeoutMs: number;
}

/** Parses one event's data; a payload that is not JSON is the upstream's fault. */
function parse<E extends keyof ParrotStreamEvents>(data: string, event: E, provider: string): ParrotStreamEvents[E] {
  try {
    return JSON.parse(data) as ParrotStreamEvents[E];
  } catch (error) {
    throw upstreamError(`${provider}: a '${event}' event is not valid JSON.`, error);
  }
}

/**
 * Yields the chunks of a streamed reply. The role chunk waits for Parrot's first event, so a
 * reply that fails before saying anything still becomes a proper error reply, not a broken stream.
 */
export async function* readParrotStream(body: HttpBody, { provider, model, timeoutMs }: ParrotStreamContext): AsyncGenerator<ChatCompletionChunk> {
  const id = `chatcmpl-parrot-${crypto.randomUUID()}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (choices: ChatChunkChoice[], usage?: Usage): ChatCompletionChunk => ({ id, object: "chat.completion.chunk", created, model, choices, ...(usage ? { usage } : {}) });
  const delta = (d: ChatChunkChoice["delta"]) => chunk([{ index: 0, delta: d, finish_reason: null }]);
  let started = false;
  let calls = 0;
  try {
    for await (const { event, data } of readSseEvents(body)) {
      if (!started) {
        started = true;
        yield delta({ role: "assistant", content: "" });
      }
      if (event === "token") {
        const { text } = parse(data, "token", provider);
        if (text) yield delta({ content: text });
      } else if (event === "call") {
        const call = mapCall(parse(data, "call", provider), `call_${id.slice(-12)}_${calls}`);
        yield delta({ tool_calls: [{ index: calls++, ...call }] });
      } else if (event === "end") {
        const end = parse(data, "end", provider);
        yield chunk([{ index: 0, delta: {}, ...mapDoneReason(end.done_reason) }]);
        // The core always asks for usage, and drops this chunk for clients that did not.
        yield chunk([], mapTokens(end.tokens));
        return;
      } else if (event === "problem") {
        throw upstreamError(`${provider}: ${parse(data, "problem", provider).detail}`);
      }
      // Any other event is a newer Parrot's addition: skipped, as the SSE spec intends.
    }
  } catch (error) {
    // A dropped connection is 502, a stalled one 504; our own errors pass through unchanged.
    throw toUpstreamError(error, provider, timeoutMs);
  }
  throw upstreamError(`${provider}: the stream ended without its 'end' event.`);
}
