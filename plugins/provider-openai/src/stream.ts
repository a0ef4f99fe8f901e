/**
 * The errors inside an OpenAI SSE reply body, which the core relays as it is (`chatStreamEvents`):
 * the provider kit's `openaiStreamErrorOf` finds them (docs/plugins.md, "The provider kit").
 */
import { openaiStreamErrorOf } from "@modelmux/core";
import { errorsOf } from "./errors.ts";

/** What `streamErrorOf` needs to word an error. */
export interface StreamErrorContext {
  /** The provider's name, for errors. */
  provider: string;
  /** The configured API key, removed from any error message. */
  secret?: string;
}

/**
 * The error an event of an OpenAI-style stream reports, or undefined for a chunk. The provider
 * itself maps with the error mapping it made at setup; this one is for a single event.
 */
export function streamErrorOf(event: string | undefined, data: string, { provider, secret }: StreamErrorContext): unknown {
  return openaiStreamErrorOf(event, data, errorsOf(provider, secret));
}
