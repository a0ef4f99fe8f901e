/**
 * What a provider receives for a validated chat request: the bare model id, and without the
 * fields the router itself serves (`store`, `metadata`). A streamed request always asks the
 * provider for usage; the core hides the usage chunk from clients that did not ask.
 */
import type { ChatRequest } from "../types/chat.ts";

/** Fields the router serves itself or sets below: not copied from the client's request. */
const NOT_COPIED = new Set(["store", "metadata", "model", "stream", "stream_options"]);

export function toProviderRequest(request: ChatRequest, model: string): ChatRequest {
  // One copy in one loop: the request is copied on every call.
  const out: Record<string, unknown> = { model };
  for (const key in request) if (!NOT_COPIED.has(key)) out[key] = request[key as keyof ChatRequest];
  out.stream = request.stream === true;
  if (request.stream) out.stream_options = { include_usage: true };
  return out as unknown as ChatRequest;
}
