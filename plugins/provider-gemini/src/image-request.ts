/**
 * Image requests -> the Gemini API. Two families, two endpoints: Gemini's native image models
 * (`gemini-2.5-flash-image`, `gemini-3-pro-image-preview`…) answer `generateContent` with image
 * parts; Imagen models (`imagen-4.0-generate-001`…) answer `:predict`. Pure: which optional fields
 * each family takes, how OpenAI's `size` becomes an aspect ratio, and the two request bodies.
 */
import { invalidRequest, type ImageGenerationRequest, type ImageOption } from "@modelmux/core";
import type { GeminiGenerationConfig, GeminiRequest, GeminiSafetySetting, ImagenRequest } from "./wire.ts";

/** `gemini`: `generateContent` with `responseModalities`; `imagen`: `:predict`. */
export type ImageFamily = "gemini" | "imagen";

const IMAGEN = /^imagen-/;

/**
 * Gemini 2.0's image models (`gemini-2.0-flash-preview-image-generation`) predate `imageConfig`
 * and reply with images only when TEXT is asked for beside IMAGE; later ones take IMAGE alone.
 */
const GEMINI_2_0 = /^gemini-2\.0-/;

const bareId = (model: string) => model.toLowerCase().replace(/^models\//, "");

/** Which endpoint serves a model's images. */
export function imageFamily(model: string): ImageFamily {
  return IMAGEN.test(bareId(model)) ? "imagen" : "gemini";
}

/**
 * The aspect ratios each family takes: `ImageConfig.aspectRatio` (Gemini, the ten of Google's
 * `ImageConfig` reference) and `GenerateImagesConfig.aspectRatio` (Imagen) in `@google/genai`.
 */
export const ASPECT_RATIOS: Readonly<Record<ImageFamily, readonly string[]>> = {
  gemini: ["1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9"],
  imagen: ["1:1", "3:4", "4:3", "9:16", "16:9"],
};

/**
 * How far (relatively) a size in pixels may be from the ratio it maps to: 3% takes OpenAI's
 * 1792x1024 as 16:9 and Gemini's own 864x1184 as 3:4, and no size is within 3% of two ratios.
 */
export const RATIO_TOLERANCE = 0.03;

/**
 * The optional image fields a model takes (the core refuses the others with a 400). `n` is made
 * with parallel calls on Gemini models (they refuse `candidateCount` above 1) and with
 * `sampleCount` on Imagen; only Imagen chooses its output format.
 * @example
 * geminiImageOptions("gemini-2.5-flash-image")  // ["n", "size"]
 * geminiImageOptions("imagen-4.0-generate-001") // ["n", "output_compression", "output_format", "size"]
 */
export function geminiImageOptions(model: string): readonly ImageOption[] {
  const id = bareId(model);
  if (IMAGEN.test(id)) return ["n", "output_compression", "output_format", "size"];
  if (GEMINI_2_0.test(id)) return ["n"];
  return ["n", "size"];
}

/** The number of images asked for (`n`, where 0 and null mean one, as in the core's check). */
export function imageCount(request: Pick<ImageGenerationRequest, "n">): number {
  return request.n != null && request.n > 1 ? request.n : 1;
}

const ratioValue = (ratio: string) => {
  const [width, height] = ratio.split(":").map(Number);
  return width! / height!;
};

/** Where the error is, for messages. */
export interface ImageTarget {
  /** The provider's configured name, prefixing messages. */
  provider: string;
  /** The bare model id. */
  model: string;
}

/**
 * OpenAI's `size` -> an aspect ratio of the family: `auto` and no size give none (the model's
 * default); `WxH` gives the nearest ratio within `RATIO_TOLERANCE`; a ratio the family takes
 * (`16:9`) is kept. Anything else is a 400 on `size`, never silently dropped.
 * @example
 * toAspectRatio("1536x1024", "gemini", target) // "3:2"
 * toAspectRatio("1792x1024", "imagen", target) // "16:9"
 * toAspectRatio("1536x1024", "imagen", target) // throws: Imagen has no 3:2
 */
export function toAspectRatio(size: string | null | undefined, family: ImageFamily, target: ImageTarget): string | undefined {
  if (size == null || size === "auto") return undefined;
  const ratios = ASPECT_RATIOS[family];
  if (ratios.includes(size)) return size;
  const pixels = /^(\d{1,5})x(\d{1,5})$/.exec(size);
  const wanted = pixels ? Number(pixels[1]) / Number(pixels[2]) : Number.NaN;
  if (wanted > 0 && Number.isFinite(wanted)) {
    // Distances on a log scale, so 2:1 and 1:2 are as far from 1:1.
    const [nearest] = ratios.map((ratio) => ({ ratio, distance: Math.abs(Math.log(wanted / ratioValue(ratio))) })).sort((a, b) => a.distance - b.distance);
    if (nearest && nearest.distance <= Math.log1p(RATIO_TOLERANCE)) return nearest.ratio;
  }
  throw invalidRequest(
    `${target.provider}: size '${size}' has no equivalent on ${target.model}, which takes the aspect ratios ${ratios.join(", ")}. ` +
      `Send a size in pixels within ${RATIO_TOLERANCE * 100}% of one of them (e.g. 1024x1024), the ratio itself, or 'auto'.`,
    { param: "size" },
  );
}

/**
 * The `generateContent` body for one image of a Gemini model: the prompt as the one user turn,
 * `responseModalities` (`["IMAGE"]`, or `["TEXT", "IMAGE"]` on Gemini 2.0), the aspect ratio in
 * `imageConfig`, and the provider's `safety_settings`. `n` is not in it: each call makes one image.
 * @example
 * toGeminiImageRequest({ model: "gemini-2.5-flash-image", prompt: "a fox", size: "1024x1024" }, target)
 * // { contents: [{ role: "user", parts: [{ text: "a fox" }] }],
 * //   generationConfig: { responseModalities: ["IMAGE"], imageConfig: { aspectRatio: "1:1" } } }
 */
export function toGeminiImageRequest(
  request: ImageGenerationRequest,
  target: ImageTarget & { safetySettings?: readonly GeminiSafetySetting[] },
): GeminiRequest {
  const generationConfig: GeminiGenerationConfig = { responseModalities: GEMINI_2_0.test(bareId(target.model)) ? ["TEXT", "IMAGE"] : ["IMAGE"] };
  const aspectRatio = toAspectRatio(request.size, "gemini", target);
  if (aspectRatio) generationConfig.imageConfig = { aspectRatio };
  const body: GeminiRequest = { contents: [{ role: "user", parts: [{ text: request.prompt }] }], generationConfig };
  if (target.safetySettings && target.safetySettings.length > 0) body.safetySettings = [...target.safetySettings];
  return body;
}

/** OpenAI's `output_format` -> the MIME types Imagen writes. */
const IMAGEN_MIME_TYPES: Readonly<Record<string, string>> = { png: "image/png", jpeg: "image/jpeg" };

/**
 * The `:predict` body of an Imagen model. `sampleCount` is always sent: Imagen's own default is 4
 * images. `includeRaiReason` makes Imagen say why it filtered an image instead of leaving it out.
 * `output_format` is `png` or `jpeg`; `output_compression` applies to `jpeg` only (400 otherwise).
 * @example
 * toImagenRequest({ model: "imagen-4.0-generate-001", prompt: "a fox", n: 2, output_format: "jpeg" }, target)
 * // { instances: [{ prompt: "a fox" }],
 * //   parameters: { sampleCount: 2, includeRaiReason: true, outputOptions: { mimeType: "image/jpeg" } } }
 */
export function toImagenRequest(request: ImageGenerationRequest, target: ImageTarget): ImagenRequest {
  const body: ImagenRequest = { instances: [{ prompt: request.prompt }], parameters: { sampleCount: imageCount(request), includeRaiReason: true } };
  const aspectRatio = toAspectRatio(request.size, "imagen", target);
  if (aspectRatio) body.parameters.aspectRatio = aspectRatio;
  if (request.output_format != null) {
    const mimeType = IMAGEN_MIME_TYPES[request.output_format];
    if (!mimeType) {
      throw invalidRequest(`${target.provider}: output_format '${request.output_format}' is not available on ${target.model}, which writes png or jpeg.`, { param: "output_format" });
    }
    body.parameters.outputOptions = { mimeType };
  }
  if (request.output_compression != null) {
    if (body.parameters.outputOptions?.mimeType !== "image/jpeg") {
      throw invalidRequest(`${target.provider}: output_compression applies only to output_format 'jpeg' on ${target.model}.`, { param: "output_compression" });
    }
    body.parameters.outputOptions.compressionQuality = request.output_compression;
  }
  return body;
}
