/**
 * What a provider receives for a validated chat request: the bare model id, and without the
 * fields the router itself serves (`store`, `metadata`). A streamed request always asks the
 * provider for usage; the core hides the usage chunk from clients that did not ask.
 */
import type { ChatRequest } from "../types/chat.ts";

export function toProviderRequest(request: ChatRequest, model: string): ChatRequest {
  const { store: _store, metadata: _metadata, ...rest } = request;
  if (rest.stream) return { ...rest, model, stream: true, stream_options: { include_usage: true } };
  const { stream_options: _streamOptions, ...json } = rest;
  return { ...json, model, stream: false };
}
