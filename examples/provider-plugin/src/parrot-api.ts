/**
 * The Parrot wire format, in one place. Parrot is an invented completion API that is deliberately
 * not OpenAI-shaped, so the plugin has to translate both ways:
 *
 *   POST {base_url}/v2/generate      header `X-Parrot-Key: <api_key>`
 *   JSON reply:   `{ id, output: { text?, call? }, done_reason, tokens: { in, out } }`
 *   `stream: true` reply (SSE):  `event: token` `{"text"}` … `event: call` `{"tool","input"}` …
 *                                `event: end` `{"done_reason","tokens"}`; `event: problem` on failure
 *   error reply:  `{ "problem": { "kind", "detail" } }` with the HTTP status (429 has `retry-after`)
 */

/** One turn of the prompt. A `bot` turn may carry a tool call; a `tool` turn is its result. */
export interface ParrotTurn {
  speaker: "system" | "human" | "bot" | "tool";
  text: string;
  /** On a `bot` turn: the tool call it made. */
  call?: ParrotCall;
  /** On a `tool` turn: the tool whose result `text` is. */
  tool?: string;
}

/** Parrot's tool calls carry no id, and their input is a JSON value, not a string. */
export interface ParrotCall {
  tool: string;
  input: unknown;
}

export interface ParrotTool {
  name: string;
  description?: string;
  /** A JSON Schema of the tool's input. */
  schema: Record<string, unknown>;
}

export interface ParrotRequest {
  model: string;
  prompt: ParrotTurn[];
  max_new_tokens?: number;
  stop_words?: string[];
  temperature?: number;
  top_p?: number;
  tools?: ParrotTool[];
  stream: boolean;
}

export type ParrotDoneReason = "complete" | "budget" | "stop_word" | "tool";

export interface ParrotTokens {
  in: number;
  out: number;
}

export interface ParrotReply {
  id: string;
  output: { text?: string; call?: ParrotCall };
  done_reason: ParrotDoneReason;
  tokens: ParrotTokens;
}

/** The payloads of a streamed reply, by SSE event name. */
export interface ParrotStreamEvents {
  token: { text: string };
  call: ParrotCall;
  end: { done_reason: ParrotDoneReason; tokens: ParrotTokens };
  problem: ParrotProblem;
}

export interface ParrotProblem {
  kind: string;
  detail: string;
}
