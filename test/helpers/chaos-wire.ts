/**
 * The chaos upstream's wire formats behind one interface, picked by the request's path:
 * `…/chat/completions` speaks OpenAI Chat Completions (`chaos-openai-wire.ts`), `…/messages`
 * Anthropic Messages (`chaos-anthropic-wire.ts`), `…/responses` OpenAI's Responses API
 * (`chaos-responses-wire.ts`), `…/images/generations` OpenAI's image generation
 * (`chaos-images-wire.ts`). Each turns a neutral {@link Answer} into the provider's exact bytes
 * (JSON reply, SSE frames) and error bodies, typed against the official SDKs' definitions so a
 * drift in shape fails type-checking.
 */
import type { ErrorReason } from "./chaos-behaviours.ts";
import { anthropicWire } from "./chaos-anthropic-wire.ts";
import { imagesWire } from "./chaos-images-wire.ts";
import { openaiWire } from "./chaos-openai-wire.ts";
import { responsesWire } from "./chaos-responses-wire.ts";

/** The request body as the chaos upstream reads it (either format); unknown fields kept. */
export interface ChaosRequestBody {
  model?: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean } | null;
  max_tokens?: number;
  messages?: Array<{ role?: string; content?: unknown }>;
  [field: string]: unknown;
}

/** One answer to send, whatever the format. */
export interface Answer {
  /** `chatcmpl-…` / `msg_…` / `resp_…` / `img_…`: the wire's `id` of the upstream's name and the attempt's index. */
  id: string;
  model: string;
  /** The text pieces, one per token event. */
  deltas: string[];
  promptTokens: number;
  /** OpenAI streams: `stream_options.include_usage` was set. */
  includeUsage: boolean;
}

/** One SSE event's bytes, and what it is to the behaviours that break a stream. */
export interface Frame {
  /** head: before the text (role chunk; message_start, content_block_start, ping; response.created…); token: one text delta; tail: finish reason and usage; done: the end marker. */
  kind: "head" | "token" | "tail" | "done";
  text: string;
}

export interface ChaosWire {
  format: "openai" | "anthropic" | "responses" | "images";
  /** A reply's id, from the upstream's `name` and the attempt's index. */
  id(name: string, index: number): string;
  /** The headers every reply carries (the provider's request id). */
  headers(id: string): Record<string, string>;
  /** A JSON reply's body. */
  json(answer: Answer): string;
  /** A stream's events, in order; `done` last when the format has an end marker of its own. */
  frames(answer: Answer): Frame[];
  /** An event whose data is cut inside its JSON. */
  malformedFrame(answer: Answer): string;
  /** A stream's error event, after which the stream ends; `sequence` is how many events came before it. */
  errorEvent(reason: ErrorReason, message?: string, sequence?: number): string;
  /** The provider's error body for `status`. */
  errorBody(status: number, reason: ErrorReason, message?: string): string;
  /** The provider's usual message for `reason` (what a test expects the client to be told). */
  messageOf(reason: ErrorReason): string;
  /** A request the provider itself refuses with a 400 whatever the script says, or undefined. */
  refusal(body: ChaosRequestBody | undefined, prefill: string | undefined): string | undefined;
}

/** The wire format a path is served in, or undefined for a path no provider here has. */
export function wireFor(path: string): ChaosWire | undefined {
  const route = path.split("?")[0] ?? "";
  if (route.endsWith("/chat/completions")) return openaiWire;
  if (route.endsWith("/messages")) return anthropicWire;
  if (route.endsWith("/responses")) return responsesWire;
  if (route.endsWith("/images/generations")) return imagesWire;
  return undefined;
}

/**
 * The text of the request's last message when it is the assistant's (a prefill to continue), else
 * undefined. Both formats carry either a string or an array of parts with `text`.
 */
export function prefillOf(body: ChaosRequestBody | undefined): string | undefined {
  const last = body?.messages?.at(-1);
  if (last?.role !== "assistant") return undefined;
  if (typeof last.content === "string") return last.content;
  if (!Array.isArray(last.content)) return "";
  return last.content.map((part: unknown) => (typeof part === "object" && part !== null && "text" in part && typeof part.text === "string" ? part.text : "")).join("");
}
