/**
 * Capability defaults per Claude model family (docs/interface.md, "Models and capabilities"). The
 * core layers the config's `capabilities` overrides on top, so a new family (or a proxy's own model
 * names) is switched on in the config, not here. Model ids are matched by prefix, so dated
 * snapshots (`claude-sonnet-4-5-20250929`) and `-latest` aliases inherit their family's defaults.
 */
import type { Capabilities } from "@modelmux/core";

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
});

/** The families with extended thinking (`thinking.budget_tokens`), which `reasoning_effort` maps to. */
const EXTENDED_THINKING = /^claude-(3-7-sonnet|sonnet-4|opus-4|haiku-4-5)/;

/** Claude 2 and Instant: text only. */
const LEGACY = /^claude-(2|instant)/;

/**
 * The capability defaults for a bare model id.
 * @example
 * anthropicCapabilities("claude-sonnet-4-5").reasoning_effort // true
 * anthropicCapabilities("claude-3-5-haiku-latest").reasoning_effort // false
 */
export function anthropicCapabilities(model: string): CapabilityMap {
  const id = model.toLowerCase();
  if (LEGACY.test(id)) return { ...CLAUDE, tools: false, parallel_tool_calls: false, vision: false };
  return { ...CLAUDE, reasoning_effort: EXTENDED_THINKING.test(id) };
}
