/**
 * The part of Anthropic's Messages API wire format this plugin writes and reads, transcribed from
 * the official SDK's definitions (`@anthropic-ai/sdk/resources/messages`). Kept here rather than
 * imported so the plugin depends on `@modelmux/core` only; `test/wire.test.ts` checks at type level
 * that these stay assignable to and from the SDK's types.
 */

/** `cache_control` as clients put it on content parts for prompt caching; passed through as is. */
export type AnthropicCacheControl = { type: "ephemeral"; ttl?: "5m" | "1h" };

/** A text block of a request. */
export interface AnthropicTextBlockParam {
  type: "text";
  text: string;
  cache_control?: AnthropicCacheControl;
}

/** An image block of a request: base64 data or a URL Anthropic fetches. */
export interface AnthropicImageBlockParam {
  type: "image";
  source: { type: "base64"; media_type: AnthropicImageMediaType; data: string } | { type: "url"; url: string };
  cache_control?: AnthropicCacheControl;
}

/** The media types Anthropic accepts for images. */
export type AnthropicImageMediaType = "image/jpeg" | "image/png" | "image/gif" | "image/webp";

/** A tool call the assistant made, replayed in an assistant turn. */
export interface AnthropicToolUseBlockParam {
  type: "tool_use";
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** A tool's result, in a user turn. */
export interface AnthropicToolResultBlockParam {
  type: "tool_result";
  tool_use_id: string;
  content?: string | Array<AnthropicTextBlockParam | AnthropicImageBlockParam>;
}

/** Any block this plugin puts in a request turn. */
export type AnthropicContentBlockParam = AnthropicTextBlockParam | AnthropicImageBlockParam | AnthropicToolUseBlockParam | AnthropicToolResultBlockParam;

/** One turn of the conversation; roles alternate. */
export interface AnthropicMessageParam {
  role: "user" | "assistant";
  content: string | AnthropicContentBlockParam[];
}

/** A client tool, described by a JSON Schema of its input. */
export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: { type: "object"; [keyword: string]: unknown };
}

/** How the model may use the tools. */
export type AnthropicToolChoice =
  | { type: "auto"; disable_parallel_tool_use?: boolean }
  | { type: "any"; disable_parallel_tool_use?: boolean }
  | { type: "tool"; name: string; disable_parallel_tool_use?: boolean }
  | { type: "none" };

/** The body of `POST /v1/messages`. */
export interface AnthropicRequest {
  model: string;
  max_tokens: number;
  messages: AnthropicMessageParam[];
  system?: string | AnthropicTextBlockParam[];
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  thinking?: { type: "enabled"; budget_tokens: number };
  metadata?: { user_id: string };
  stream?: boolean;
}

/** Anthropic's `usage`, as the JSON reply and `message_start` carry it; `message_delta` may repeat any of it. */
export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  output_tokens_details?: { thinking_tokens?: number } | null;
}

/**
 * The content blocks of a reply this plugin reads. Only `text` and `tool_use` become part of the
 * chat completion; thinking and server-tool blocks are skipped, so replies are read from `unknown`
 * with guards rather than trusted to this union.
 */
export type AnthropicContentBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string };

/** A JSON reply of `POST /v1/messages` (`type: "message"`). */
export interface AnthropicMessage {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: AnthropicContentBlock[];
  stop_reason: string | null;
  stop_sequence?: string | null;
  usage: AnthropicUsage;
}

/** Anthropic's error body, as error replies and the stream's `error` event carry it. */
export interface AnthropicErrorBody {
  type: "error";
  error: { type: string; message: string };
  request_id?: string | null;
}

/** The events of a streamed reply (the SSE `event:` name equals the payload's `type`). */
export type AnthropicStreamEvent =
  | { type: "message_start"; message: AnthropicMessage }
  | { type: "content_block_start"; index: number; content_block: AnthropicContentBlock }
  | { type: "content_block_delta"; index: number; delta: AnthropicContentDelta }
  | { type: "content_block_stop"; index: number }
  | { type: "message_delta"; delta: { stop_reason: string | null; stop_sequence?: string | null }; usage?: AnthropicUsage | null }
  | { type: "message_stop" }
  | { type: "ping" }
  | AnthropicErrorBody;

/** The `delta` of a `content_block_delta` event. */
export type AnthropicContentDelta =
  | { type: "text_delta"; text: string }
  | { type: "input_json_delta"; partial_json: string }
  | { type: "thinking_delta"; thinking: string }
  | { type: "signature_delta"; signature: string }
  | { type: "citations_delta"; citation: unknown };
