/**
 * What the client of a chat stream has received so far, kept for stream continuation
 * (docs/interface.md, "Stream continuation"): the stream's `id`, `model` and `created`, the text of
 * its one choice, and whether anything but text came (a tool call, a refusal, audio), which a
 * continuation cannot carry on. It follows the chunks the stream check passed (`collect`), so it
 * sees exactly what is relayed.
 */
import type { ChatCompletionChunk, Usage } from "../types/chat.ts";

type JsonRecord = Record<string, unknown>;

/** Delta keys a continuation cannot carry on from: the answer is not text alone. */
const NOT_TEXT = ["tool_calls", "function_call", "refusal", "audio"] as const;

export class Transcript {
  id: string | undefined;
  model: string | undefined;
  created: number | undefined;
  /** The text of choice 0 so far. */
  text = "";
  /** Something other than text was sent (or a choice other than 0): no continuation. */
  notText = false;
  /** A finish reason was sent: the answer is over, nothing to continue. */
  finished = false;

  /** Takes one chunk the client gets (a `collect` of `chunk-check.ts`). */
  readonly add = (chunk: ChatCompletionChunk): void => {
    if (this.id === undefined && typeof chunk.id === "string") {
      this.id = chunk.id;
      if (typeof chunk.model === "string") this.model = chunk.model;
      if (typeof chunk.created === "number") this.created = chunk.created;
    }
    for (const choice of chunk.choices) {
      if ((choice.index ?? 0) !== 0) {
        this.notText = true;
        continue;
      }
      // An upstream's chunk may carry "" where OpenAI's carries null.
      if (choice.finish_reason) this.finished = true;
      const delta = choice.delta as JsonRecord | undefined;
      if (delta === undefined || delta === null) continue;
      if (typeof delta.content === "string") this.text += delta.content;
      for (const key of NOT_TEXT) if (delta[key] !== undefined && delta[key] !== null) this.notText = true;
    }
  };

  /** The text a continuation may start from: some text, and nothing else, with no finish reason yet. */
  get continuable(): boolean {
    return !this.notText && !this.finished && this.text.trimEnd() !== "";
  }
}

/** Two usages added up: a continuation's usage adds to what the broken attempt reported. */
export function addUsage(before: Usage | undefined, after: Usage | undefined): Usage | undefined {
  if (before === undefined) return after;
  if (after === undefined) return before;
  return {
    ...after,
    prompt_tokens: count(before.prompt_tokens) + count(after.prompt_tokens),
    completion_tokens: count(before.completion_tokens) + count(after.completion_tokens),
    total_tokens: count(before.total_tokens) + count(after.total_tokens),
  };
}

/** A token count as a number: an upstream's usage is checked to be an object, not its fields. */
function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}
