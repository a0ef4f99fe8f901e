/**
 * Capability defaults per OpenAI model family (docs/interface.md, "Models and capabilities"). The
 * core layers the config's `capabilities` overrides on top, so a default that is wrong for one
 * deployment is fixed in the config, not here. Model ids are matched by prefix (the core's
 * `capabilityTable`, docs/plugins.md, "The provider kit") so dated snapshots
 * (`gpt-4o-2024-08-06`) and sizes (`gpt-4.1-nano`, `o4-mini`) inherit their family's defaults.
 */
import { capabilityTable, type Capabilities } from "@modelmux/core";

type CapabilityMap = Partial<Capabilities>;

/** What OpenAI's current chat models share. `responses`: these models also serve /v1/responses. */
const GPT_CHAT: CapabilityMap = {
  chat: true,
  streaming: true,
  tools: true,
  parallel_tool_calls: true,
  vision: true,
  json_mode: true,
  json_schema: true,
  logprobs: true,
  n: true,
  responses: true,
};

/**
 * o-series reasoning models reject `logprobs`, `n > 1` and `parallel_tool_calls`, so those stay
 * off; the upstream's 400 would be the only other signal.
 */
const O_SERIES: CapabilityMap = {
  chat: true,
  streaming: true,
  tools: true,
  vision: true,
  json_mode: true,
  json_schema: true,
  reasoning_effort: true,
  responses: true,
};

/** Older chat models: tools and JSON mode, but no structured outputs (json_schema) and no vision. */
const LEGACY_CHAT: CapabilityMap = {
  chat: true,
  streaming: true,
  tools: true,
  parallel_tool_calls: true,
  json_mode: true,
  logprobs: true,
  n: true,
};

/**
 * Any model we do not know: most likely served by an OpenAI-compatible server (vLLM, Ollama, LM
 * Studio, llama.cpp, Groq, Together…). On: what such servers commonly take, `response_format`
 * `json_schema` included (LangChain's structured output sends it by default), and `responses`, which
 * only the provider named by `responses.provider` is ever asked for, naming it being the operator's
 * word that its server serves `/v1/responses`. A server that lacks one answers the request with its
 * own 400, relayed to the client; the config switches it off. Why each is on or off:
 * plugins/provider-openai/README.md, "Capability defaults".
 */
export const COMPATIBLE_DEFAULTS: Readonly<CapabilityMap> = Object.freeze({
  chat: true,
  streaming: true,
  tools: true,
  json_mode: true,
  json_schema: true,
  responses: true,
});

const IMAGES: CapabilityMap = { chat: false, streaming: false, images: true };
/** Embedding models have no chat endpoint either: `POST /embeddings` only. */
const EMBEDDINGS: CapabilityMap = { chat: false, streaming: false, embeddings: true };
/** The audio previews take and return audio, but not images. */
const AUDIO: CapabilityMap = { chat: true, streaming: true, tools: true, parallel_tool_calls: true, audio: true, n: true };

/**
 * The capability defaults for a bare model id: the longest matching prefix wins, so
 * `gpt-4o-audio-preview` is not `gpt-4o`, and `gpt-4o` not `gpt-4`.
 * @example
 * openaiCapabilities("gpt-4o-mini").vision // true
 * openaiCapabilities("llama3.1:8b")        // COMPATIBLE_DEFAULTS
 * openaiCapabilities("text-embedding-3-small") // { chat: false, streaming: false, embeddings: true }
 */
export const openaiCapabilities = capabilityTable({
  prefixes: {
    // Image models have no chat endpoint at all.
    "gpt-image-": IMAGES,
    "dall-e-": IMAGES,
    "gpt-4o-audio-preview": AUDIO,
    "gpt-4o-mini-audio-preview": AUDIO,
    "gpt-audio": AUDIO,
    "gpt-5": { ...GPT_CHAT, reasoning_effort: true },
    "gpt-4o": GPT_CHAT,
    "gpt-4.1": GPT_CHAT,
    "chatgpt-4o": GPT_CHAT,
    "gpt-4": LEGACY_CHAT,
    "gpt-3.5": LEGACY_CHAT,
  },
  patterns: [
    // OpenAI's `text-embedding-*`, and the embedding models compatible servers serve under their
    // own names (`nomic-embed-text`, `mxbai-embed-large`, `Qwen3-Embedding-8B`…).
    [/embed/, EMBEDDINGS],
    // o1, o3, o4…: a family a prefix list would have to enumerate.
    [/^o\d/, O_SERIES],
  ],
  fallback: COMPATIBLE_DEFAULTS,
});
