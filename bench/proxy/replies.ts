/**
 * The fake upstream's fixed replies, built once: OpenAI chat completions (JSON and a 20-chunk SSE
 * stream), Anthropic messages (JSON and its SSE event sequence) and OpenAI responses (JSON and the
 * real event sequence, response.created … response.completed). Shapes follow the providers' wire
 * formats as their SDKs type them, with the fields real replies carry (`service_tier`,
 * `usage: null` on every chunk of a stream that asked for usage), so a router does the work a
 * real reply makes it do.
 */

/** Content chunks per streamed reply (the issue's N). */
export const CHUNKS = 20;

const CREATED = 1_763_800_000;
const TOKENS = Array.from({ length: CHUNKS }, (_, i) => (i === 0 ? "Routers" : ` token${i}`));
const TEXT = TOKENS.join("");

const sse = (data: unknown, event?: string) => `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`;

// OpenAI chat completions -------------------------------------------------------------------------

const CHAT_MODEL = "gpt-4o-mini-2024-07-18";
const CHAT_USAGE = {
  prompt_tokens: 24,
  completion_tokens: CHUNKS,
  total_tokens: 24 + CHUNKS,
  prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
};

const chatJson = {
  id: "chatcmpl-bench",
  object: "chat.completion",
  created: CREATED,
  model: CHAT_MODEL,
  choices: [{ index: 0, message: { role: "assistant", content: TEXT, refusal: null, annotations: [] }, logprobs: null, finish_reason: "stop" }],
  usage: CHAT_USAGE,
  service_tier: "default",
  system_fingerprint: "fp_bench",
};

const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: "chatcmpl-bench",
  object: "chat.completion.chunk",
  created: CREATED,
  model: CHAT_MODEL,
  service_tier: "default",
  system_fingerprint: "fp_bench",
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  usage: null,
});

/** The role chunk alone: what a held stream sends before it is released. */
const chatHead = sse(chunk({ role: "assistant", content: "", refusal: null }));
const chatTail =
  TOKENS.map((token) => sse(chunk({ content: token }))).join("") +
  sse(chunk({}, "stop")) +
  sse({ ...chunk({}), choices: [], usage: CHAT_USAGE }) +
  "data: [DONE]\n\n";

// Anthropic messages ------------------------------------------------------------------------------

const CLAUDE_MODEL = "claude-sonnet-4-5-20250929";
const startUsage = { input_tokens: 24, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 };

const messageJson = {
  id: "msg_bench",
  type: "message",
  role: "assistant",
  model: CLAUDE_MODEL,
  content: [{ type: "text", text: TEXT }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { ...startUsage, output_tokens: CHUNKS },
};

const messageStream =
  sse({ type: "message_start", message: { ...messageJson, content: [], stop_reason: null, usage: startUsage } }, "message_start") +
  sse({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }, "content_block_start") +
  sse({ type: "ping" }, "ping") +
  TOKENS.map((text) => sse({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }, "content_block_delta")).join("") +
  sse({ type: "content_block_stop", index: 0 }, "content_block_stop") +
  sse({ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: CHUNKS } }, "message_delta") +
  sse({ type: "message_stop" }, "message_stop");

// OpenAI responses --------------------------------------------------------------------------------

const outputText = { type: "output_text", annotations: [], logprobs: [], text: TEXT };
const messageItem = { id: "msg_bench", type: "message", status: "completed", content: [outputText], role: "assistant" };
const responseJson = {
  id: "resp_bench",
  object: "response",
  created_at: CREATED,
  status: "completed",
  background: false,
  error: null,
  incomplete_details: null,
  instructions: null,
  max_output_tokens: null,
  model: CHAT_MODEL,
  output: [messageItem],
  parallel_tool_calls: true,
  previous_response_id: null,
  reasoning: { effort: null, summary: null },
  service_tier: "default",
  store: true,
  temperature: 1,
  text: { format: { type: "text" }, verbosity: "medium" },
  tool_choice: "auto",
  tools: [],
  top_p: 1,
  truncation: "disabled",
  usage: { input_tokens: 24, input_tokens_details: { cached_tokens: 0 }, output_tokens: CHUNKS, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 24 + CHUNKS },
  user: null,
  metadata: {},
};

function responseEvents(): string {
  let sequence = 0;
  const event = (type: string, fields: Record<string, unknown>) => sse({ type, sequence_number: sequence++, ...fields }, type);
  const inProgress = { ...responseJson, status: "in_progress", output: [], usage: null };
  const at = { item_id: "msg_bench", output_index: 0, content_index: 0 };
  return (
    event("response.created", { response: inProgress }) +
    event("response.in_progress", { response: inProgress }) +
    event("response.output_item.added", { output_index: 0, item: { ...messageItem, status: "in_progress", content: [] } }) +
    event("response.content_part.added", { ...at, part: { ...outputText, text: "" } }) +
    TOKENS.map((delta) => event("response.output_text.delta", { ...at, delta, logprobs: [], obfuscation: "x" })).join("") +
    event("response.output_text.done", { ...at, text: TEXT, logprobs: [] }) +
    event("response.content_part.done", { ...at, part: outputText }) +
    event("response.output_item.done", { output_index: 0, item: messageItem }) +
    event("response.completed", { response: responseJson })
  );
}

/** Every reply as bytes, ready to write. */
export const REPLIES = {
  chatJson: Buffer.from(JSON.stringify(chatJson)),
  chatStream: Buffer.from(chatHead + chatTail),
  chatHead: Buffer.from(chatHead),
  chatTail: Buffer.from(chatTail),
  messageJson: Buffer.from(JSON.stringify(messageJson)),
  messageStream: Buffer.from(messageStream),
  responseJson: Buffer.from(JSON.stringify(responseJson)),
  responseStream: Buffer.from(responseEvents()),
};

/** What a client checks a reply for: the whole text arrived (JSON), or the last event did (SSE). */
export const EXPECT = { text: TEXT, lastToken: TOKENS.at(-1)! };
