/**
 * The normalised chat completion types: what the core hands a provider plugin and what every
 * provider's reply is turned into. They follow OpenAI's chat completions wire format, as the
 * router's interface does (docs/interface.md).
 */

export type JsonObject = { [key: string]: unknown };

export interface TextPart {
  type: "text";
  text: string;
}

export interface ImageUrlPart {
  type: "image_url";
  image_url: { url: string; detail?: "auto" | "low" | "high" | null };
}

export type ContentPart = TextPart | ImageUrlPart | ({ type: string } & JsonObject);

export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: "developer" | "system" | "user" | "assistant" | "tool" | "function";
  content?: string | ContentPart[] | null;
  name?: string | null;
  tool_call_id?: string | null;
  tool_calls?: ToolCall[] | null;
  refusal?: string | null;
  [extra: string]: unknown;
}

export interface FunctionTool {
  type: "function";
  function: { name: string; description?: string | null; parameters?: JsonObject | null; strict?: boolean | null };
}

export type ToolChoice = "none" | "auto" | "required" | { type: "function"; function: { name: string } };

/** A chat completion request as validated by the core (see `schemas/chat-request.ts`). */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  audio?: { format: string; voice: string } | null;
  modalities?: string[] | null;
  frequency_penalty?: number | null;
  presence_penalty?: number | null;
  logit_bias?: Record<string, number> | null;
  logprobs?: boolean | null;
  top_logprobs?: number | null;
  max_completion_tokens?: number | null;
  /** Deprecated by OpenAI in favour of `max_completion_tokens`; still accepted. */
  max_tokens?: number | null;
  metadata?: Record<string, string> | null;
  n?: number | null;
  parallel_tool_calls?: boolean | null;
  prediction?: { type: string; content: string | ContentPart[] } | null;
  prompt_cache_key?: string | null;
  reasoning_effort?: "minimal" | "low" | "medium" | "high" | null;
  response_format?: ({ type: "text" | "json_object" | "json_schema" } & JsonObject) | null;
  seed?: number | null;
  service_tier?: string | null;
  stop?: string | string[] | null;
  store?: boolean | null;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean | null } | null;
  temperature?: number | null;
  top_p?: number | null;
  tool_choice?: ToolChoice | null;
  tools?: FunctionTool[] | null;
  user?: string | null;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: JsonObject | null;
  completion_tokens_details?: JsonObject | null;
}

export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "error";

export interface ChatChoice {
  index: number;
  finish_reason: FinishReason;
  /** The provider's own reason, kept when it differs in name from `finish_reason`. */
  native_finish_reason?: string;
  message: {
    role: "assistant";
    content: string | null;
    refusal?: string | null;
    tool_calls?: ToolCall[];
    annotations?: unknown[];
    audio?: JsonObject | null;
  };
  logprobs?: JsonObject | null;
}

export interface ChatCompletion {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  choices: ChatChoice[];
  usage: Usage;
  service_tier?: string | null;
  system_fingerprint?: string | null;
}

/**
 * A chat completion whose upstream reported no usage: `usage` is left out, never made up (OpenAI's
 * own completion object has it optional, and its SDKs accept a reply without it). What a provider
 * returns when its upstream sent none (an OpenAI-compatible server may not), and what a stream
 * without a usage chunk is stored as. Build a `ChatCompletion` whenever the upstream reports usage.
 */
export type ChatCompletionWithoutUsage = Omit<ChatCompletion, "usage"> & { usage?: undefined };

export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: "function";
  function?: { name?: string; arguments?: string };
}

export interface ChatChunkChoice {
  index: number;
  delta: {
    role?: "assistant";
    content?: string | null;
    refusal?: string | null;
    tool_calls?: ToolCallDelta[];
  };
  finish_reason: FinishReason | null;
  native_finish_reason?: string;
  logprobs?: JsonObject | null;
}

export interface ChatCompletionChunk {
  id: string;
  object: "chat.completion.chunk";
  created: number;
  model: string;
  choices: ChatChunkChoice[];
  usage?: Usage | null;
  service_tier?: string | null;
  system_fingerprint?: string | null;
}

/**
 * One event of a streamed chat reply, as a provider yields it: a chunk object, or a chunk that is
 * already serialised JSON in OpenAI's format (an OpenAI-compatible upstream's `data:` payload),
 * which the core parses for its checks and writes to the client byte for byte. A chunk object
 * given its JSON text with `withRawJson` is checked as the object and written as that text.
 */
export type ChatStreamItem = ChatCompletionChunk | string;
