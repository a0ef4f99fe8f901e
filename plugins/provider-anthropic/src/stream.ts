/**
 * Anthropic's SSE reply (message_start, content_block_start/delta/stop, message_delta,
 * message_stop, ping, error) -> `chat.completion.chunk` objects. `createStreamTranslator` is the
 * pure event-by-event mapping; `readMessageStreamBatches` feeds it from the reply body and hands
 * the core one batch of chunks per upstream read (the plugin's `chatStream`).
 * Text and tool-argument deltas, nearly every event of a reply, take a fast path
 * (`delta-literal.ts`): their chunk's JSON is built from the event's string literal without
 * parsing the event, and handed to the core with the chunk (`withRawJson`), which then neither
 * parses nor serialises it.
 */
import {
  readSseEventBatches,
  upstreamError,
  type ChatChunkChoice,
  type ChatCompletionChunk,
  type ChatStreamItem,
  type EventSourceMessage,
  type HttpBody,
  toBodyReadError,
  withRawJson,
} from "@modelmux/core";
import { ARGUMENTS_DELTA, decodeLiteral, TEXT_DELTA } from "./delta-literal.ts";
import { toStreamError } from "./errors.ts";
import { mapStopReason, toUsage } from "./response.ts";
import type { AnthropicUsage } from "./wire.ts";

type Json = Record<string, unknown>;
type Delta = ChatChunkChoice["delta"];

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

/** What the translator needs besides the events. */
export interface StreamContext {
  /** The provider's name, for errors. */
  provider: string;
  /** The bare model requested, used until `message_start` names the model. */
  model: string;
  /** The configured API key, removed from any error message. */
  secret?: string;
}

/** Turns Anthropic stream events, one at a time, into the chunks to send. */
export interface StreamTranslator {
  /**
   * The chunks for one parsed event (often none). Throws the mapped error for an `error` event.
   * `ping`, thinking deltas and unknown events give nothing.
   */
  push(event: unknown): ChatCompletionChunk[];
  /**
   * The chunk for a `text_delta` whose text is the JSON string literal `literal`: what `push` makes
   * of the event, field for field, carrying its JSON text (`withRawJson`), built from a head kept
   * per message and the literal as it is: exactly `JSON.stringify` of the chunk. The literal must
   * be written as `JSON.stringify` writes strings (`CANONICAL_STRING`, `delta-literal.ts`). null when the event
   * gives no chunk; undefined when it needs `push` (the first chunk, which carries the role).
   */
  textChunk(literal: string): ChatCompletionChunk | null | undefined;
  /** The same for an `input_json_delta` of content block `blockIndex`: the tool call's argument fragment. */
  argumentsChunk(blockIndex: number, literal: string): ChatCompletionChunk | null | undefined;
  /**
   * The chunks that close a body that ended without `message_stop` (none after it): the usage
   * chunk once `message_delta` has given the stop reason, as the answer is then whole and
   * `message_stop` adds nothing to it. Throws 502 for a body that ended before the stop reason.
   */
  end(): ChatCompletionChunk[];
  /** True once `message_stop` has been translated: the reply is complete. */
  readonly done: boolean;
}

/** The usage fields a `message_delta` may update; a null or missing field keeps its value. */
const USAGE_FIELDS = ["input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens_details"] as const;

/**
 * Creates the translator for one stream. Every chunk has the same id (Anthropic's message id),
 * `created` and model; the first carries `delta.role: "assistant"`. Tool calls are numbered in the
 * order they start (`tool_calls[].index`), whatever their content block index.
 * @example
 * const t = createStreamTranslator({ provider: "anthropic", model: "claude-sonnet-4-5" });
 * t.push({ type: "message_start", message }); // [{ …, choices: [{ delta: { role: "assistant", content: "" } }] }]
 */
export function createStreamTranslator(context: StreamContext): StreamTranslator {
  // Made only if the reply names none: `message_start` carries Anthropic's message id.
  let id = "";
  let model = context.model;
  const created = Math.floor(Date.now() / 1000);
  const usage: AnthropicUsage = {};
  /** Content block index -> tool call index, and whether any argument text was sent for it. */
  const tools = new Map<number, { index: number; sentArguments: boolean }>();
  let roleSent = false;
  let finished = false;
  let done = false;

  const messageId = () => (id ||= `msg_${crypto.randomUUID()}`);
  const chunk = (delta: Delta, finish?: ReturnType<typeof mapStopReason>): ChatCompletionChunk => {
    if (!roleSent) {
      delta = { role: "assistant", ...delta };
      roleSent = true;
    }
    return { id: messageId(), object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: null, ...finish }] };
  };
  const toolDelta = (blockIndex: number, args: string): ChatCompletionChunk[] => {
    const tool = tools.get(blockIndex);
    if (!tool || !args) return [];
    tool.sentArguments = true;
    return [chunk({ tool_calls: [{ index: tool.index, function: { arguments: args } }] })];
  };
  const updateUsage = (raw: unknown) => {
    if (!isObject(raw)) return;
    for (const field of USAGE_FIELDS) if (raw[field] != null) (usage as Json)[field] = raw[field];
  };

  function push(event: unknown): ChatCompletionChunk[] {
    if (!isObject(event) || done) return [];
    const index = typeof event.index === "number" ? event.index : -1;
    switch (event.type) {
      case "message_start": {
        const message = isObject(event.message) ? event.message : {};
        if (typeof message.id === "string" && message.id) id = message.id;
        if (typeof message.model === "string" && message.model) model = message.model;
        head = "";
        updateUsage(message.usage);
        return roleSent ? [] : [chunk({ content: "" })];
      }
      case "content_block_start": {
        const block = isObject(event.content_block) ? event.content_block : {};
        if (block.type === "text") return typeof block.text === "string" && block.text ? [chunk({ content: block.text })] : [];
        if (block.type !== "tool_use") return []; // thinking, server tools: not part of a chat completion
        const tool = { index: tools.size, sentArguments: false };
        tools.set(index, tool);
        const name = typeof block.name === "string" ? block.name : "";
        const head = chunk({ tool_calls: [{ index: tool.index, id: String(block.id ?? ""), type: "function", function: { name, arguments: "" } }] });
        // Streamed input arrives as input_json_delta; an input already present at the start is sent whole.
        const input = isObject(block.input) && Object.keys(block.input).length > 0 ? JSON.stringify(block.input) : "";
        return [head, ...toolDelta(index, input)];
      }
      case "content_block_delta": {
        const delta = isObject(event.delta) ? event.delta : {};
        if (delta.type === "text_delta" && typeof delta.text === "string") return delta.text ? [chunk({ content: delta.text })] : [];
        if (delta.type === "input_json_delta" && typeof delta.partial_json === "string") return toolDelta(index, delta.partial_json);
        return []; // thinking_delta, signature_delta, citations_delta
      }
      case "content_block_stop": {
        // A tool without arguments streams none: send `{}` so the client's arguments parse.
        const tool = tools.get(index);
        return tool && !tool.sentArguments ? toolDelta(index, "{}") : [];
      }
      case "message_delta": {
        updateUsage(event.usage);
        const delta = isObject(event.delta) ? event.delta : {};
        if (typeof delta.stop_reason !== "string" || finished) return [];
        finished = true;
        return [chunk({}, mapStopReason(delta.stop_reason))];
      }
      case "message_stop": {
        done = true;
        const last: ChatCompletionChunk[] = finished ? [] : [chunk({}, mapStopReason(undefined))];
        return [...last, usageChunk()];
      }
      case "error":
        throw toStreamError(context.provider, event, context.secret);
      default:
        return []; // ping, and events added to the API later
    }
  }

  const usageChunk = (): ChatCompletionChunk => ({ id: messageId(), object: "chat.completion.chunk", created, model, choices: [], usage: toUsage(usage) });

  function end(): ChatCompletionChunk[] {
    if (done) return [];
    if (!finished) throw upstreamError(`${context.provider}: the stream ended before message_stop.`);
    done = true;
    return [usageChunk()];
  }

  /** `{"id":…,"object":…,"created":…,"model":…` for the current id and model; reset by `message_start`. */
  let head = "";
  const headOf = () => (head ||= JSON.stringify({ id: messageId(), object: "chat.completion.chunk", created, model }).slice(0, -1));

  /** A delta's chunk with its JSON `text`: the fields of the text, in its order (`JSON.stringify(chunk)` is `text`). */
  const rawChunk = (delta: Delta, text: string) =>
    withRawJson<ChatCompletionChunk>({ id: messageId(), object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: null }] }, text);

  function textChunk(literal: string): ChatCompletionChunk | null | undefined {
    if (done || literal === '""') return null;
    if (!roleSent) return undefined;
    const text = `${headOf()},"choices":[{"index":0,"delta":{"content":${literal}},"finish_reason":null}]}`;
    return rawChunk({ content: decodeLiteral(literal) }, text);
  }

  function argumentsChunk(blockIndex: number, literal: string): ChatCompletionChunk | null | undefined {
    if (done) return null;
    if (!roleSent) return undefined;
    const tool = tools.get(blockIndex);
    if (!tool || literal === '""') return null;
    tool.sentArguments = true;
    const text = `${headOf()},"choices":[{"index":0,"delta":{"tool_calls":[{"index":${tool.index},"function":{"arguments":${literal}}}]},"finish_reason":null}]}`;
    return rawChunk({ tool_calls: [{ index: tool.index, function: { arguments: decodeLiteral(literal) } }] }, text);
  }

  return {
    push,
    textChunk,
    argumentsChunk,
    end,
    get done() {
      return done;
    },
  };
}

/**
 * The chunk of a text or tool-argument delta, made from its string literal without parsing the
 * event (null: the event gives none); undefined for any other event, which takes the full parse.
 */
function deltaChunk(data: string, translator: StreamTranslator): ChatCompletionChunk | null | undefined {
  const text = TEXT_DELTA.exec(data);
  if (text !== null) return translator.textChunk(text[1]!);
  const args = ARGUMENTS_DELTA.exec(data);
  return args === null ? undefined : translator.argumentsChunk(Number(args[1]), args[2]!);
}

/** An event's payload (undefined for an empty one). Throws 502 for data that is not JSON. */
function parseEvent({ event, data }: EventSourceMessage, provider: string): unknown {
  if (!data.trim()) return undefined;
  let payload: unknown;
  try {
    payload = JSON.parse(data);
  } catch (error) {
    throw upstreamError(`${provider}: a stream event is not valid JSON.`, error);
  }
  // The `event:` name and the payload's `type` agree on Anthropic; either one is enough.
  if (isObject(payload) && typeof payload.type !== "string" && event) payload.type = event;
  return payload;
}

/**
 * Translates one read's events into `items`, stopping at `message_stop`. The error that ends the
 * stream (an `error` event, an event that is not JSON) is returned, not thrown: the chunks before
 * it are sent first.
 */
function translateRead(events: readonly EventSourceMessage[], translator: StreamTranslator, items: ChatStreamItem[], provider: string): unknown {
  try {
    for (let i = 0; i < events.length && !translator.done; i++) {
      const event = events[i]!;
      const fast = deltaChunk(event.data, translator);
      if (fast !== undefined) {
        if (fast !== null) items.push(fast);
        continue;
      }
      const chunks = translator.push(parseEvent(event, provider));
      for (let j = 0; j < chunks.length; j++) items.push(chunks[j]!);
    }
  } catch (error) {
    return error;
  }
  return undefined;
}

/** `readMessageStreamBatches` options: the translator's, plus the call's timeout. */
export interface ReadMessageStreamOptions extends StreamContext {
  /** The call's timeout, for the 504 of a stalled body. */
  timeoutMs: number;
}

/**
 * Yields the chunks of an Anthropic SSE body, one batch per upstream read (what `chatStream`
 * hands the core; never an empty batch), in order, and stops after
 * `message_stop`. A body that ends after `message_delta` gave the stop reason, without
 * `message_stop`, is whole: its last batch is the usage chunk. Throws the mapped error for an
 * `error` event, 502 for an event that is not JSON, each after a batch of the chunks before it; 502
 * for a body that ends before the stop reason (a reply cut short must not look complete), 504 for a
 * stalled body. Text and tool-argument deltas
 * come with their JSON text (`withRawJson`: the core checks the object and writes the text as it
 * is), every other chunk as a plain object; the two read the same to a client.
 */
export async function* readMessageStreamBatches(body: HttpBody, options: ReadMessageStreamOptions): AsyncGenerator<ChatStreamItem[]> {
  const translator = createStreamTranslator(options);
  try {
    for await (const events of readSseEventBatches(body)) {
      const items: ChatStreamItem[] = [];
      const failure = translateRead(events, translator, items, options.provider);
      if (items.length > 0) yield items;
      if (failure !== undefined) throw failure;
      if (translator.done) return;
    }
  } catch (error) {
    throw toBodyReadError(error, options.provider, options.timeoutMs);
  }
  const last = translator.end();
  if (last.length > 0) yield last;
}
