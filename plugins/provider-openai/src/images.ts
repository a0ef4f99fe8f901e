/**
 * OpenAI image generation (`POST /images/generations`): which optional fields each model family
 * takes, and the request as OpenAI wants it (the provider kit reads the reply). GPT image models always
 * return base64 and refuse `response_format`; DALL·E models return URLs unless asked for base64.
 */
import { toOpenAIImageRequest, type ImageGenerationRequest, type ImageOption } from "@modelmux/core";

const GPT_IMAGE = /^gpt-image-/i;

/** First match wins. From OpenAI's API reference for `images.generate`. */
const FAMILIES: ReadonlyArray<{ pattern: RegExp; options: readonly ImageOption[] }> = [
  { pattern: GPT_IMAGE, options: ["background", "moderation", "n", "output_compression", "output_format", "quality", "size"] },
  // DALL·E 3 makes one image per request, and is the only one with `style`.
  { pattern: /^dall-e-3/i, options: ["quality", "size", "style"] },
  { pattern: /^dall-e-2/i, options: ["n", "size"] },
];

/** What an OpenAI-compatible image server is assumed to take when the model is not OpenAI's. */
const COMPATIBLE_OPTIONS: readonly ImageOption[] = ["n", "size"];

export function openaiImageOptions(model: string): readonly ImageOption[] {
  return FAMILIES.find((family) => family.pattern.test(model))?.options ?? COMPATIBLE_OPTIONS;
}

/** The request body: the client's fields, null ones dropped, `response_format` only where it exists. */
export function toImageRequest(request: ImageGenerationRequest, model: string): Record<string, unknown> {
  const body = toOpenAIImageRequest(request, model);
  if (GPT_IMAGE.test(model)) delete body.response_format;
  return body;
}
