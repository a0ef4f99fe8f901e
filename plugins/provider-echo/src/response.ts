/**
 * Turns a reply plan into the `chat.completion` object. Only `id` and `created` are not a function
 * of the request; they come in `meta`.
 */
import type { ChatCompletion } from "@modelmux/core";
import type { ReplyPlan } from "./reply.ts";

/** The fields every object of one reply shares (the completion, or each chunk of a stream). */
export interface ReplyMeta {
  id: string;
  /** Unix seconds. */
  created: number;
  /** The bare model id the request named. */
  model: string;
  /**
   * The request's `service_tier`; sent back only when the request set it
   * (docs/interface.md, "What the router changes").
   */
  serviceTier?: string | null;
}

/** The `service_tier` field, present only when the request had one. */
export function serviceTierField(meta: ReplyMeta): { service_tier?: string } {
  return meta.serviceTier == null ? {} : { service_tier: meta.serviceTier };
}

/** The non-streamed reply: `plan.n` identical choices. */
export function toCompletion(plan: ReplyPlan, meta: ReplyMeta): ChatCompletion {
  return {
    id: meta.id,
    object: "chat.completion",
    created: meta.created,
    model: meta.model,
    choices: Array.from({ length: plan.n }, (_, index) => ({
      index,
      finish_reason: plan.finishReason,
      message: {
        role: "assistant" as const,
        content: plan.content,
        ...(plan.toolCall ? { tool_calls: [structuredClone(plan.toolCall)] } : {}),
      },
      logprobs: null,
    })),
    usage: { ...plan.usage },
    ...serviceTierField(meta),
  };
}
