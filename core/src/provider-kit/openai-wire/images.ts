/**
 * An OpenAI image reply (`POST /images/generations`) -> the interface's image result, read
 * defensively, for every OpenAI-shaped provider (docs/plugins.md, "The provider kit").
 */
import { upstreamError } from "../../errors.ts";
import type { ImageData, ImagesResponse } from "../../types/images.ts";
import { parseUpstreamJson } from "../../upstream/send.ts";

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

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
