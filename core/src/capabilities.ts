import type { ImageGenerationRequest } from "./schemas/images-request.ts";
import type { ChatRequest } from "./types/chat.ts";
import { IMAGE_OPTIONS, type ImageOption } from "./types/images.ts";
import { invalidRequest } from "./errors.ts";

/** Every feature a model may or may not have (docs/interface.md, "Models and capabilities"). */
export const CAPABILITY_NAMES = [
  "chat",
  "streaming",
  "tools",
  "parallel_tool_calls",
  "vision",
  "json_mode",
  "json_schema",
  "logprobs",
  "n",
  "audio",
  "reasoning_effort",
  "images",
  "responses",
  "embeddings",
  "prefill",
] as const;

export type Capability = (typeof CAPABILITY_NAMES)[number];
export type Capabilities = Record<Capability, boolean>;

/** What a model has when neither its plugin nor the config says otherwise: plain chat only. */
export const BASE_CAPABILITIES: Readonly<Capabilities> = Object.freeze({
  chat: true,
  streaming: true,
  tools: false,
  parallel_tool_calls: false,
  vision: false,
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

/** Layers capability maps; later layers win. Used once per model at start-up. */
export function mergeCapabilities(...layers: Array<Partial<Capabilities> | undefined>): Capabilities {
  return Object.assign({ ...BASE_CAPABILITIES }, ...layers.filter(Boolean));
}

function hasImagePart(request: ChatRequest): boolean {
  for (const message of request.messages) {
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content) if (part.type === "image_url") return true;
  }
  return false;
}

/** The chat request features that need a capability, with the request field that names each. */
const CHAT_FEATURES: ReadonlyArray<{ capability: Capability; param: string; feature: string; uses: (r: ChatRequest) => boolean }> = [
  { capability: "chat", param: "model", feature: "chat completions", uses: () => true },
  { capability: "streaming", param: "stream", feature: "streaming", uses: (r) => r.stream === true },
  { capability: "tools", param: "tools", feature: "tools", uses: (r) => (r.tools?.length ?? 0) > 0 },
  { capability: "parallel_tool_calls", param: "parallel_tool_calls", feature: "parallel tool calls", uses: (r) => r.parallel_tool_calls === true },
  { capability: "vision", param: "messages", feature: "image inputs (vision)", uses: hasImagePart },
  { capability: "json_mode", param: "response_format", feature: "response_format json_object", uses: (r) => r.response_format?.type === "json_object" },
  { capability: "json_schema", param: "response_format", feature: "response_format json_schema", uses: (r) => r.response_format?.type === "json_schema" },
  { capability: "logprobs", param: "logprobs", feature: "logprobs", uses: (r) => r.logprobs === true },
  { capability: "n", param: "n", feature: "more than one choice (n > 1)", uses: (r) => (r.n ?? 1) > 1 },
  { capability: "audio", param: "modalities", feature: "audio", uses: (r) => r.audio != null || (r.modalities?.includes("audio") ?? false) },
  { capability: "reasoning_effort", param: "reasoning_effort", feature: "reasoning_effort", uses: (r) => r.reasoning_effort != null },
];

/**
 * How to turn `capability` on for `modelName` (`provider/model`) in the config, for a refusal's
 * message: a plugin's defaults are a guess for a server it does not know (an OpenAI-compatible one),
 * so the message says where to correct it (docs/interface.md, "Models and capabilities").
 * @example capabilityFix("json_schema", "groq/llama-3.3-70b")
 * // "if it does, set capabilities: { json_schema: true } on providers.groq, or on its entry in providers.groq.models"
 */
export function capabilityFix(capability: Capability, modelName: string): string {
  const provider = `providers.${modelName.slice(0, modelName.indexOf("/"))}`;
  return `if it does, set capabilities: { ${capability}: true } on ${provider}, or on its entry in ${provider}.models`;
}

/** The 400 of a model that lacks `capability` for `feature` (the request field `param`). */
function unsupported(modelName: string, feature: string, capability: Capability, param: string) {
  return invalidRequest(`Model '${modelName}' does not support ${feature}; ${capabilityFix(capability, modelName)}`, { code: "unsupported_feature", param });
}

/**
 * The one capability check for chat requests (docs/interface.md, "Models and capabilities"). Throws
 * 400 `unsupported_feature` naming the first request field the model cannot serve, and the config
 * that turns the feature on.
 */
export function assertChatCapabilities(request: ChatRequest, capabilities: Capabilities, modelName: string): void {
  for (const { capability, param, feature, uses } of CHAT_FEATURES) {
    if (!capabilities[capability] && uses(request)) throw unsupported(modelName, feature, capability, param);
  }
}

/** The same check for endpoints that need a single capability (images, responses, embeddings). */
export function assertCapability(capabilities: Capabilities, capability: Capability, modelName: string, param = "model"): void {
  if (!capabilities[capability]) throw unsupported(modelName, capability, capability, param);
}

/** What each optional image field is called in the error, when the model does not take it. */
const IMAGE_OPTION_FEATURES: Record<ImageOption, string> = {
  background: "background",
  moderation: "moderation",
  n: "more than one image (n > 1)",
  output_compression: "output_compression",
  output_format: "output_format",
  quality: "quality",
  size: "size",
  style: "style",
};

/**
 * The capability check for image requests: the `images` capability, then each optional field the
 * request sets against the fields the model takes. Same 400 `unsupported_feature` whatever the
 * provider, so a field only one provider supports is refused alike by all the others. The fields
 * are the plugin's (`imageOptions`), not the config's: their refusal names no config fix.
 */
export function assertImageCapabilities(
  request: ImageGenerationRequest,
  capabilities: Capabilities,
  options: ReadonlySet<ImageOption>,
  modelName: string,
): void {
  assertCapability(capabilities, "images", modelName);
  for (const option of IMAGE_OPTIONS) {
    const value = request[option];
    const used = option === "n" ? (value ?? 1) !== 1 && value !== 0 : value != null;
    if (used && !options.has(option)) {
      throw invalidRequest(`Model '${modelName}' does not support ${IMAGE_OPTION_FEATURES[option]}`, { code: "unsupported_feature", param: option });
    }
  }
}
