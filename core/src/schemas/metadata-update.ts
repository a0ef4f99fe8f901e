/**
 * The body of `POST /v1/chat/completions/{completion_id}`: `metadata` only (docs/interface.md,
 * "Request bodies"), with the Limits of the interface. `metadata` is required — an empty body would
 * be an update of nothing — and may be null, like every metadata field of the interface.
 */
import type { JsonSchema } from "../plugin.ts";
import { metadata } from "./common.ts";

export interface MetadataUpdate {
  metadata: Record<string, string> | null;
}

export const metadataUpdateSchema: JsonSchema = {
  type: "object",
  required: ["metadata"],
  additionalProperties: false,
  properties: { metadata },
};
