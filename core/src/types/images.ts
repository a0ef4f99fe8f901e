/**
 * The image generation reply (docs/interface.md, "Images"), and the optional request
 * fields a provider may or may not accept.
 */

/** One generated image: base64 or a URL, and the prompt the model actually used. */
export interface ImageData {
  b64_json?: string;
  url?: string;
  revised_prompt?: string;
}

export interface ImageUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  input_tokens_details?: { image_tokens: number; text_tokens: number };
}

export interface ImagesResponse {
  /** Unix seconds. */
  created: number;
  data: ImageData[];
  background?: string;
  output_format?: string;
  quality?: string;
  size?: string;
  usage?: ImageUsage;
}

/**
 * The optional fields of an image request that not every model takes. `prompt`, `model`,
 * `response_format` (the core serves URLs when a provider returns only base64) and `user` are
 * always accepted.
 */
export const IMAGE_OPTIONS = ["background", "moderation", "n", "output_compression", "output_format", "quality", "size", "style"] as const;

export type ImageOption = (typeof IMAGE_OPTIONS)[number];
