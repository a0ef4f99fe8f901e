/**
 * The contract between the conformance kit and a provider's fake upstream. A fake upstream speaks
 * its provider's exact wire format; the kit scripts it in provider-neutral terms, so one battery
 * runs against every provider.
 */

/** One reply of the fake upstream, in provider-neutral terms. */
export interface ScriptedReply {
  /**
   * The assistant's text. Streamed in several chunks (at least 3 for a text of 3+ words), whose
   * concatenation is the text exactly, leading whitespace included (a continuation's usually has some).
   */
  text?: string;
  /**
   * Reply with one tool call instead of text; `arguments` is a JSON object string. `id` is sent
   * only by upstreams whose format has call ids.
   */
  toolCall?: { id?: string; name: string; arguments: string };
  /**
   * Why generation ended, in neutral terms; the fake sends its provider's own value for it
   * (Anthropic `end_turn`/`max_tokens`/`tool_use`/`stop_sequence`, Gemini `STOP`/`MAX_TOKENS`…).
   * Default: `tool_calls` when `toolCall` is set, else `stop`.
   */
  finish?: "stop" | "length" | "tool_calls" | "stop_sequence";
  /** Token counts the upstream reports. Default `{ input: 11, output: 7 }`. */
  usage?: { input: number; output: number };
  /** Reply with this HTTP error in the provider's own error body (and `retry-after` when given). */
  error?: { status: number; message: string; retryAfter?: string };
  /** Hold the status line and headers this long (ms): a call the client may abandon while it waits. */
  holdMs?: number;
  /** Answer 200 with a body that is not the provider's format at all (`this is not JSON`). */
  malformed?: boolean;
  /**
   * Streams only: after `afterChunks` content chunks (text or tool-call events; a role-only chunk
   * does not count), `destroy` the connection, `stall` (send nothing more until the client leaves)
   * or `end` the body cleanly, as if it were complete, with no finish reason or end event.
   */
  streamFailure?: { afterChunks: number; mode: "destroy" | "stall" | "end" };
  /**
   * Streams only: wait this long (ms) after each event before the next, so that a stream lasts
   * longer than the provider's timeout while no gap comes near it.
   */
  eventGapMs?: number;
}

/** A request as the fake upstream received it. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body. */
  body: unknown;
  /** True when the client closed the connection before the reply was complete. */
  aborted: boolean;
}

/**
 * A running fake upstream, as the kit drives it. A provider with embeddings has its fake answer its
 * embedding route too: each vector a function of the input's text and the asked `dimensions` only
 * (of that length), and a queued `error` or `malformed` reply played there as on chat.
 */
export interface ConformanceUpstream {
  /** The provider block's plugin options that point the plugin at this upstream (`base_url`, `api_key`…). */
  options: Record<string, unknown>;
  /** Queues the next reply; without one queued the fake replies `{ text: "Hello from the upstream" }`. */
  next(reply: ScriptedReply): void;
  /** Every request received, in order. */
  readonly requests: readonly ReceivedRequest[];
  /** Resolves once request `index` has been answered in full or aborted by the client. */
  finished(index: number): Promise<ReceivedRequest>;
  /** Forgets requests and queued replies. */
  reset(): void;
  close(): Promise<void>;
}

/** What the kit needs to read from a provider's upstream request body. */
export interface UpstreamRequestReader {
  /** The model id the upstream was asked for (from the body or the path). */
  model(request: ReceivedRequest): string | undefined;
  /** The stop sequences the upstream was sent. */
  stop(request: ReceivedRequest): readonly string[] | undefined;
  /** Whether the upstream was asked to stream. */
  streamed(request: ReceivedRequest): boolean;
  /** The names of the tools (functions) the upstream was offered. */
  toolNames(request: ReceivedRequest): readonly string[];
}
