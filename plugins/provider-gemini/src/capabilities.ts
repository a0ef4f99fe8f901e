/**
 * Capability defaults per Gemini model family (docs/interface.md, "Models and capabilities"). The
 * core layers the config's `capabilities` overrides on top, so a default that is wrong for one
 * deployment is fixed in the config, not here. Ids are matched by prefix or pattern so versions and variants
 * (`gemini-2.5-flash-lite`, `gemini-2.0-flash-001`, `models/gemini-2.5-pro`) inherit their family's
 * defaults.
 */
import { capabilityTable, type Capabilities } from "@modelmux/core";

type CapabilityMap = Partial<Capabilities>;

/**
 * What the Gemini 1.5 / 2.0 chat models share. Not `logprobs`: Gemini's log probabilities are
 * not translated (their shape differs from OpenAI's); not `audio` output, `images` or `responses`.
 * Not `prefill` (docs/plugins.md, "Stream continuation"): Google documents no continuation of a
 * final `model` turn by `generateContent`, and from Gemini 3.6 Flash and 3.5 Flash-Lite on, every
 * model answers a request that ends with one with a 400 ("Requests ending with a model turn are not
 * supported"). Older models take such a request, but nothing documented says they continue that
 * turn's text rather than answer after it; a config that has checked a model switches it on there.
 */
const GEMINI_CHAT: CapabilityMap = {
  chat: true,
  streaming: true,
  tools: true,
  parallel_tool_calls: true,
  vision: true,
  json_mode: true,
  json_schema: true,
  n: true,
  reasoning_effort: false,
  logprobs: false,
  audio: false,
  images: false,
  responses: false,
  embeddings: false,
  prefill: false,
};

/** Gemini 2.5 and later think, with a budget that `reasoning_effort` sets. */
const GEMINI_THINKING: CapabilityMap = { ...GEMINI_CHAT, reasoning_effort: true };

/**
 * Anything else served by the Gemini API (Gemma, LearnLM, future names): chat and streaming are
 * certain, the rest is switched on per model in the config.
 */
export const OTHER_DEFAULTS: Readonly<CapabilityMap> = Object.freeze({ chat: true, streaming: true });

/**
 * The capability defaults for a bare model id (the core's `capabilityTable`; `models/` dropped).
 * @example
 * geminiCapabilities("gemini-2.5-flash").reasoning_effort // true
 * geminiCapabilities("gemini-2.0-flash").reasoning_effort // false
 * geminiCapabilities("gemini-2.5-flash-image")            // { chat: false, streaming: false, images: true }
 * geminiCapabilities("gemini-embedding-001")              // { chat: false, streaming: false, embeddings: true }
 */
export const geminiCapabilities = capabilityTable({
  // Tried in order before the prefixes: families a prefix cannot name.
  patterns: [
    // Image-generation models (`gemini-2.5-flash-image`, `imagen-4.0-generate-001`, and the
    // `nano-banana-pro-preview` alias the SDK lists) are for the images endpoint, which
    // `image-request.ts` serves; their chat replies are images, which chat completions cannot carry.
    [/image|^imagen-|nano-banana/, { chat: false, streaming: false, images: true }],
    // Embedding models (`gemini-embedding-001`, `text-embedding-004`) have no generateContent at
    // all: `embedContent` and `batchEmbedContents` only (`embeddings.ts`).
    [/embedding/, { chat: false, streaming: false, embeddings: true }],
    [/^gemini-([3-9]|[1-9]\d)|^gemini-(flash|flash-lite|pro)-latest$/, GEMINI_THINKING],
  ],
  prefixes: { "gemini-2.5": GEMINI_THINKING, "gemini-": GEMINI_CHAT },
  fallback: OTHER_DEFAULTS,
  normalize: (id) => id.replace(/^models\//, ""),
});
