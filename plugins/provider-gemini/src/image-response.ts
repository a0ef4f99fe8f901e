/**
 * Gemini and Imagen image replies -> OpenAI's `ImagesResponse`. Each upstream reply is first read
 * into an `ImageHarvest` (its images, what the filters withheld, why it has none); then
 * `toImagesResponse` joins the harvests of the calls made for one request (n `generateContent`
 * calls, or one `:predict`). Pure; a reply that is not the expected shape is a 502.
 */
import { invalidRequest, upstreamError, type ImagesResponse, type ImageUsage, type ModelmuxError } from "@modelmux/core";
import { CONTENT_FILTER_REASONS, createdAt, tokenCount } from "./response.ts";
import type { GeminiModalityTokenCount, GeminiResponse, GeminiUsageMetadata, ImagenPrediction, ImagenResponse } from "./wire.ts";

/** One image as the upstream sent it. */
export interface HarvestedImage {
  /** Base64, as Gemini and Imagen both send it. */
  b64: string;
  mimeType: string;
  /** Imagen's rewritten prompt, when it enhanced the prompt. */
  revisedPrompt?: string;
}

/** What one upstream reply yielded. */
export interface ImageHarvest {
  images: HarvestedImage[];
  /** What the safety filters said about what they withheld: block or finish reasons, Imagen's RAI messages. */
  blocked: string[];
  /** Why a reply without images and without a filter's word had none. */
  missing?: string;
  usage?: ImageUsage;
  /** Unix seconds from the reply's `createTime` (Vertex sends one), when it has one. */
  created?: number;
}

/** A model's text beside a missing image is shown to the client up to this length. */
const MAX_TEXT = 200;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const isImage = (blob: unknown): blob is { data: string; mimeType: string } =>
  isObject(blob) && typeof blob.data === "string" && blob.data !== "" && typeof blob.mimeType === "string" && blob.mimeType.startsWith("image/");

const modalityTokens = (details: GeminiModalityTokenCount[], modality: string) =>
  details.reduce((sum, detail) => sum + (isObject(detail) && detail.modality === modality ? tokenCount(detail.tokenCount) : 0), 0);

/**
 * Gemini's usage -> the images `usage`: input = prompt (+ tool-use prompt) tokens, output =
 * candidates + thoughts tokens (both billed as output), and the prompt's TEXT / IMAGE split when
 * Gemini gives `promptTokensDetails`. Undefined without `usageMetadata`.
 */
export function mapImageUsage(metadata: GeminiUsageMetadata | undefined): ImageUsage | undefined {
  if (!isObject(metadata)) return undefined;
  const input = tokenCount(metadata.promptTokenCount) + tokenCount(metadata.toolUsePromptTokenCount);
  const output = tokenCount(metadata.candidatesTokenCount) + tokenCount(metadata.thoughtsTokenCount);
  const usage: ImageUsage = { input_tokens: input, output_tokens: output, total_tokens: tokenCount(metadata.totalTokenCount) || input + output };
  if (Array.isArray(metadata.promptTokensDetails)) {
    usage.input_tokens_details = { text_tokens: modalityTokens(metadata.promptTokensDetails, "TEXT"), image_tokens: modalityTokens(metadata.promptTokensDetails, "IMAGE") };
  }
  return usage;
}

/**
 * Reads a `generateContent` reply of an image model: every `inlineData` image part that is not a
 * thought (Gemini 3 Pro Image shows draft images as thoughts) is an image. Without one, a
 * `promptFeedback.blockReason` or a filter finish reason (`SAFETY`, `IMAGE_SAFETY`,
 * `PROHIBITED_CONTENT`…) means blocked; anything else (`NO_IMAGE`, text only) is `missing`.
 */
export function readGeminiImages(body: unknown, provider: string): ImageHarvest {
  if (!isObject(body)) throw upstreamError(`${provider}: the reply is not a GenerateContentResponse.`);
  const reply = body as GeminiResponse;
  const candidates = Array.isArray(reply.candidates) ? reply.candidates.filter((candidate): boolean => isObject(candidate)) : [];
  const harvest: ImageHarvest = { images: [], blocked: [] };
  const finishes: string[] = [];
  let text = "";
  for (const candidate of candidates) {
    const before = harvest.images.length;
    for (const part of candidate.content?.parts ?? []) {
      if (!isObject(part) || part.thought === true) continue;
      if (isImage(part.inlineData)) harvest.images.push({ b64: part.inlineData.data, mimeType: part.inlineData.mimeType });
      else if (typeof part.text === "string") text += part.text;
    }
    const reason = candidate.finishReason;
    if (harvest.images.length > before || typeof reason !== "string") continue;
    if (!CONTENT_FILTER_REASONS.has(reason)) finishes.push(reason);
    else harvest.blocked.push(candidate.finishMessage ? `${reason}: ${candidate.finishMessage}` : reason);
  }
  const blockReason = reply.promptFeedback?.blockReason;
  if (typeof blockReason === "string" && blockReason) harvest.blocked.unshift(blockReason);
  if (harvest.images.length === 0 && harvest.blocked.length === 0) {
    const said = text.trim().replace(/\s+/g, " ");
    harvest.missing =
      candidates.length === 0
        ? "the reply has no candidates"
        : `the model answered without an image (finish reason ${finishes.join(", ") || "none"})` +
          (said ? `: "${said.length > MAX_TEXT ? `${said.slice(0, MAX_TEXT)}…` : said}"` : "");
  }
  const usage = mapImageUsage(reply.usageMetadata);
  if (usage) harvest.usage = usage;
  if (typeof reply.createTime === "string") harvest.created = createdAt(reply.createTime);
  return harvest;
}

/**
 * Reads a `:predict` reply of an Imagen model: each prediction is an image
 * (`bytesBase64Encoded`, `mimeType`, PNG when absent; `prompt` is the rewritten prompt) or, with
 * `includeRaiReason`, the `raiFilteredReason` of one the filters removed. No predictions at all is
 * `missing`: with `includeRaiReason` Imagen always says why.
 */
export function readImagenImages(body: unknown, provider: string): ImageHarvest {
  if (!isObject(body)) throw upstreamError(`${provider}: the reply is not an Imagen prediction response.`);
  const reply = body as ImagenResponse;
  const predictions: ImagenPrediction[] = Array.isArray(reply.predictions) ? reply.predictions.filter((prediction): boolean => isObject(prediction)) : [];
  const harvest: ImageHarvest = { images: [], blocked: [] };
  for (const prediction of predictions) {
    if (typeof prediction.bytesBase64Encoded === "string" && prediction.bytesBase64Encoded !== "") {
      const image: HarvestedImage = { b64: prediction.bytesBase64Encoded, mimeType: typeof prediction.mimeType === "string" ? prediction.mimeType : "image/png" };
      if (typeof prediction.prompt === "string" && prediction.prompt) image.revisedPrompt = prediction.prompt;
      harvest.images.push(image);
    } else if (typeof prediction.raiFilteredReason === "string" && prediction.raiFilteredReason) {
      harvest.blocked.push(prediction.raiFilteredReason);
    }
  }
  if (harvest.images.length === 0 && harvest.blocked.length === 0) harvest.missing = predictions.length === 0 ? "the reply has no predictions" : "no prediction carries an image";
  return harvest;
}

/** The 400 of a request whose images the safety filters withheld, in OpenAI's terms (`content_policy_violation`). */
export function promptBlocked(provider: string, reasons: readonly string[]): ModelmuxError {
  return invalidRequest(`${provider}: the prompt was blocked by Google's safety filters (${reasons.join("; ")}); no image was generated.`, {
    code: "content_policy_violation",
    param: "prompt",
  });
}

/** The MIME types Gemini and Imagen write -> OpenAI's `output_format`. */
const OUTPUT_FORMATS: Readonly<Record<string, string>> = { "image/png": "png", "image/jpeg": "jpeg", "image/webp": "webp" };

function sumUsage(usages: ImageUsage[]): ImageUsage | undefined {
  if (usages.length <= 1) return usages[0];
  const total: ImageUsage = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
  for (const usage of usages) {
    total.input_tokens += usage.input_tokens;
    total.output_tokens += usage.output_tokens;
    total.total_tokens += usage.total_tokens;
    if (usage.input_tokens_details) {
      const details = (total.input_tokens_details ??= { text_tokens: 0, image_tokens: 0 });
      details.text_tokens += usage.input_tokens_details.text_tokens;
      details.image_tokens += usage.input_tokens_details.image_tokens;
    }
  }
  return total;
}

/**
 * Joins the harvests of one request into the reply: every image as `b64_json` (with Imagen's
 * `revised_prompt`), `output_format` from the first image's MIME type, the usage summed. Images the
 * filters withheld are left out while others came; with no image at all the request fails: a 400
 * `content_policy_violation` when a filter withheld them (`promptBlocked`), else a 502.
 */
export function toImagesResponse(harvests: readonly ImageHarvest[], provider: string): ImagesResponse {
  const images = harvests.flatMap((harvest) => harvest.images);
  const [first] = images;
  if (!first) {
    const blocked = [...new Set(harvests.flatMap((harvest) => harvest.blocked))];
    if (blocked.length > 0) throw promptBlocked(provider, blocked);
    throw upstreamError(`${provider}: ${harvests.find((harvest) => harvest.missing)?.missing ?? "the reply has no image"}.`);
  }
  const reply: ImagesResponse = {
    created: harvests.find((harvest) => harvest.created !== undefined)?.created ?? Math.floor(Date.now() / 1000),
    data: images.map((image) => (image.revisedPrompt ? { b64_json: image.b64, revised_prompt: image.revisedPrompt } : { b64_json: image.b64 })),
  };
  const format = OUTPUT_FORMATS[first.mimeType.toLowerCase()];
  if (format) reply.output_format = format;
  const usage = sumUsage(harvests.flatMap((harvest) => (harvest.usage ? [harvest.usage] : [])));
  if (usage) reply.usage = usage;
  return reply;
}
