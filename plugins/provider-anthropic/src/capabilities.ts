/**
 * Capability defaults per Claude model family (docs/interface.md, "Models and capabilities"). The
 * core layers the config's `capabilities` overrides on top, so a new family (or a proxy's own model
 * names) is switched on in the config, not here. Model ids are matched by prefix, so dated
 * snapshots (`claude-sonnet-4-5-20250929`) and `-latest` aliases inherit their family's defaults.
 */
import { capabilityTable, type Capabilities } from "@modelmux/core";

type CapabilityMap = Partial<Capabilities>;

/**
 * What every Claude 3 and later model has through the Messages API. The rest stays off: Anthropic
 * has no JSON mode or structured outputs in chat completions' sense, no logprobs, one choice per
 * request, no audio, no image output, and `/v1/responses` is OpenAI's.
 */
const CLAUDE: Readonly<CapabilityMap> = Object.freeze({
  chat: true,
  streaming: true,
  tools: true,
  parallel_tool_calls: true,
  vision: true,
  json_mode: false,
  json_schema: false,
  logprobs: false,
  n: false,
  audio: false,
  reasoning_effort: false,
  images: false,
  responses: false,
  prefill: false,
});

/** Claude 2 and Instant: text only. */
const LEGACY: Readonly<CapabilityMap> = { ...CLAUDE, tools: false, parallel_tool_calls: false, vision: false };
/** The families with extended thinking (`thinking.budget_tokens`), which `reasoning_effort` maps to. */
const THINKING: Readonly<CapabilityMap> = { ...CLAUDE, reasoning_effort: true };

/**
 * The capability defaults for a bare model id, by the longest matching prefix (the core's
 * `capabilityTable`).
 * @example
 * anthropicCapabilities("claude-sonnet-4-5").reasoning_effort // true
 * anthropicCapabilities("claude-3-5-haiku-latest").reasoning_effort // false
 */
export const anthropicCapabilities = capabilityTable({
  prefixes: {
    "claude-2": LEGACY,
    "claude-instant": LEGACY,
    "claude-3-7-sonnet": THINKING,
    "claude-sonnet-4": THINKING,
    "claude-opus-4": THINKING,
    "claude-haiku-4-5": THINKING,
  },
  fallback: CLAUDE,
});
