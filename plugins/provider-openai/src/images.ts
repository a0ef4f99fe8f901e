/**
 * OpenAI image generation (`POST /images/generations`): which optional fields each model family
 * takes, the request as OpenAI wants it, and the reply read defensively. GPT image models always
 * return base64 and refuse `response_format`; DALL·E models return URLs unless asked for base64.
 */
import { parseUpstreamJson, upstreamError, type ImageData, type ImageGenerationRequest, type ImageOption, type ImagesResponse } from "@modelmux/core";

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

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
export function toOpenAIImageRequest(request: ImageGenerationRequest, model: string): Json {
  const body: Json = {};
  for (const [key, value] of Object.entries(request)) if (value != null) body[key] = value;
  body.model = model;
  if (GPT_IMAGE.test(model)) delete body.response_format;
  return body;
}

function mapImage(raw: unknown): ImageData {
  const item = isObject(raw) ? raw : {};
  const out: ImageData = {};
  if (typeof item.b64_json === "string") out.b64_json = item.b64_json;
  if (typeof item.url === "string") out.url = item.url;
  if (typeof item.revised_prompt === "string") out.revised_prompt = item.revised_prompt;
  return out;
}

/** Parses a 200 reply; one without a `data` array is the upstream failing (502). */
export function parseImagesText(text: string, provider: string): ImagesResponse {
  const body = parseUpstreamJson(text, provider);
  if (!isObject(body) || !Array.isArray(body.data)) throw upstreamError(`${provider}: the image reply has no 'data' array.`);
  const reply: ImagesResponse = {
    created: typeof body.created === "number" ? body.created : Math.floor(Date.now() / 1000),
    data: body.data.map(mapImage),
  };
  for (const key of ["background", "output_format", "quality", "size"] as const) if (typeof body[key] === "string") reply[key] = body[key];
  if (isObject(body.usage)) reply.usage = body.usage as unknown as ImagesResponse["usage"];
  return reply;
}
