/**
 * The body of `POST /v1/images/generations` (docs/interface.md, "Request bodies"). Unknown
 * fields are rejected, as on chat: the body is translated per provider, and a dropped field
 * should be a clear 400 rather than a silent no-op.
 */
import type { JsonSchema } from "../plugin.ts";
import { nullableEnum, nullableString } from "./common.ts";

export interface ImageGenerationRequest {
  model: string;
  prompt: string;
  background?: string | null;
  moderation?: string | null;
  n?: number | null;
  output_compression?: number | null;
  output_format?: string | null;
  quality?: string | null;
  response_format?: "url" | "b64_json" | null;
  size?: string | null;
  style?: "vivid" | "natural" | null;
  user?: string | null;
}

export const imagesRequestSchema: JsonSchema = {
  type: "object",
  required: ["model", "prompt"],
  additionalProperties: false,
  properties: {
    model: { type: "string" },
    prompt: { type: "string" },
    background: nullableString,
    moderation: nullableString,
    // OpenAI's own upper bound; without one, one request could ask for a million images.
    n: { type: ["integer", "null"], minimum: 0, maximum: 10 },
    output_compression: { type: ["integer", "null"], minimum: 0, maximum: 100 },
    output_format: nullableString,
    quality: nullableString,
    response_format: nullableEnum(["url", "b64_json"]),
    size: nullableString,
    style: nullableEnum(["vivid", "natural"]),
    user: nullableString,
  },
};
