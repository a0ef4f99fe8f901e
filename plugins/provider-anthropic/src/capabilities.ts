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
 * request, no audio, no image output, no embeddings (Anthropic has no embeddings API), and
 * `/v1/responses` is OpenAI's.
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
  embeddings: false,
  prefill: false,
});

/**
 * The families that continue a final assistant message (Anthropic's "prefill"): every Claude before
 * 4.6. Claude 4.6 and every later model refuse it with a 400 ("This model does not support
 * assistant message prefill"), so `prefill` is on by name only, and off for names the plugin does
 * not know (README, "Capability defaults").
 */
const PREFILL: Readonly<CapabilityMap> = { ...CLAUDE, prefill: true };
/** Claude 2 and Instant: text only. */
const LEGACY: Readonly<CapabilityMap> = { ...PREFILL, tools: false, parallel_tool_calls: false, vision: false };
/** The families with extended thinking (`thinking.budget_tokens`), which `reasoning_effort` maps to. */
const THINKING: Readonly<CapabilityMap> = { ...CLAUDE, reasoning_effort: true };
/** Extended thinking, and prefill (Claude 3.7 to 4.5). */
const THINKING_PREFILL: Readonly<CapabilityMap> = { ...THINKING, prefill: true };

/**
 * The capability defaults for a bare model id, by the longest matching prefix (the core's
 * `capabilityTable`).
 * @example
 * anthropicCapabilities("claude-sonnet-4-5").reasoning_effort // true
 * anthropicCapabilities("claude-3-5-haiku-latest").reasoning_effort // false
 * anthropicCapabilities("claude-sonnet-4-5").prefill // true
 * anthropicCapabilities("claude-sonnet-4-6").prefill // false
 */
export const anthropicCapabilities = capabilityTable({
  prefixes: {
    "claude-2": LEGACY,
    "claude-instant": LEGACY,
    "claude-3": PREFILL,
    "claude-3-7-sonnet": THINKING_PREFILL,
    // Claude 4 ids are `claude-sonnet-4-0` or dated `claude-sonnet-4-20250514`; 4.6 and later have no prefill.
    "claude-sonnet-4": THINKING,
    "claude-sonnet-4-0": THINKING_PREFILL,
    "claude-sonnet-4-2025": THINKING_PREFILL,
    "claude-sonnet-4-5": THINKING_PREFILL,
    "claude-opus-4": THINKING,
    "claude-opus-4-0": THINKING_PREFILL,
    "claude-opus-4-2025": THINKING_PREFILL,
    "claude-opus-4-1": THINKING_PREFILL,
    "claude-opus-4-5": THINKING_PREFILL,
    "claude-haiku-4-5": THINKING_PREFILL,
  },
  fallback: CLAUDE,
});
