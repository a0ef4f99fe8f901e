/**
 * Capability defaults per OpenAI model family (docs/interface.md, "Models and capabilities"). The
 * core layers the config's `capabilities` overrides on top, so a default that is wrong for one
 * deployment is fixed in the config, not here. Model ids are matched by prefix so dated snapshots
 * (`gpt-4o-2024-08-06`) and sizes (`gpt-4.1-nano`, `o4-mini`) inherit their family's defaults.
 */
import type { Capabilities } from "@modelmux/core";

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
 * Any model we do not know: most likely served by an OpenAI-compatible server (vLLM, Ollama,
 * Groq…). Chat, streaming, tools and JSON mode are what such servers commonly implement; anything
 * more is switched on per model in the config.
 */
export const COMPATIBLE_DEFAULTS: Readonly<CapabilityMap> = Object.freeze({
  chat: true,
  streaming: true,
  tools: true,
  json_mode: true,
});

/** First match wins, so the more specific prefixes come first. */
const FAMILIES: ReadonlyArray<{ pattern: RegExp; capabilities: CapabilityMap }> = [
  // Image models have no chat endpoint at all.
  { pattern: /^(gpt-image-|dall-e-)/, capabilities: { chat: false, streaming: false, images: true } },
  // The audio previews take and return audio, but not images.
  {
    pattern: /^(gpt-4o-audio-preview|gpt-4o-mini-audio-preview|gpt-audio)/,
    capabilities: { chat: true, streaming: true, tools: true, parallel_tool_calls: true, audio: true, n: true },
  },
  { pattern: /^gpt-5/, capabilities: { ...GPT_CHAT, reasoning_effort: true } },
  { pattern: /^o\d/, capabilities: O_SERIES },
  { pattern: /^(gpt-4o|gpt-4\.1|chatgpt-4o)/, capabilities: GPT_CHAT },
  { pattern: /^(gpt-4|gpt-3\.5)/, capabilities: LEGACY_CHAT },
];

/**
 * The capability defaults for a bare model id.
 * @example
 * openaiCapabilities("gpt-4o-mini").vision // true
 * openaiCapabilities("llama3.1:8b")        // COMPATIBLE_DEFAULTS
 */
export function openaiCapabilities(model: string): CapabilityMap {
  const id = model.toLowerCase();
  for (const family of FAMILIES) if (family.pattern.test(id)) return { ...family.capabilities };
  return { ...COMPATIBLE_DEFAULTS };
}
