/**
 * A continuation's frames as the client gets them (docs/interface.md, "Stream continuation"): the
 * rest of one answer, in the stream the client is reading. Each chunk takes the stream's `id`,
 * `model` and `created`; the `role` the client had at the start is not sent again; whitespace the
 * client already has (the prefill was sent without its trailing whitespace, which Anthropic
 * refuses) is not repeated when the continuation begins with it; the usage chunk adds what the
 * broken attempt reported. The chunks are collected as the client gets them (transcript, store).
 *
 * The frames come from `stream-attempt.ts` already checked: `data:` events of chunks, the error
 * event, `[DONE]`. A continuation is rare, so each event is parsed and written again.
 */
import type { ChatCompletionChunk, Usage } from "../types/chat.ts";
import { sseData, sseDataLines } from "../sse/write.ts";
import type { SentSoFar } from "./stream-attempt.ts";
import { addUsage } from "./transcript.ts";

type JsonRecord = Record<string, unknown>;

/** The `data` of each event in `frame`, in order. */
function eventData(frame: string): string[] {
  const data: string[] = [];
  for (const event of frame.split("\n\n")) {
    if (event === "") continue;
    const lines = [];
    for (const line of event.split("\n")) if (line.startsWith("data:")) lines.push(line.slice(line.startsWith("data: ") ? 6 : 5));
    data.push(lines.join("\n"));
  }
  return data;
}

/** Whether a delta still says something once the role is gone. */
function saysSomething(delta: JsonRecord): boolean {
  for (const key in delta) {
    const value = delta[key];
    if (value !== undefined && value !== null && value !== "") return true;
  }
  return false;
}

export class ContinuedFrames {
  /** Whitespace the client has and the continuation may begin with: skipped once. */
  private skip: string;

  /**
   * @param sent what the broken attempt kept: its transcript (which names the stream) and assembler
   * @param skip the trailing whitespace of the text the client has, left out of the prefill
   * @param usageBefore the usage the broken attempts reported, if any
   */
  constructor(
    private readonly sent: SentSoFar,
    skip: string,
    private readonly usageBefore: Usage | undefined,
  ) {
    this.skip = skip;
  }

  /** The client's text for one frame of the continuation; "" when nothing in it is news. */
  rewrite(frame: string): string {
    let out = "";
    for (const data of eventData(frame)) {
      let chunk: ChatCompletionChunk;
      try {
        chunk = JSON.parse(data) as ChatCompletionChunk;
      } catch {
        out += sseDataLines(data);
        continue;
      }
      // `[DONE]` and the error event pass as they are.
      if (typeof chunk !== "object" || chunk === null || !Array.isArray(chunk.choices)) {
        out += sseDataLines(data);
        continue;
      }
      if (this.take(chunk)) out += sseData(JSON.stringify(chunk));
    }
    return out;
  }

  /** Rewrites one chunk in place; false when it is left out (it said nothing the client lacks). */
  private take(chunk: ChatCompletionChunk): boolean {
    const { transcript, assembler } = this.sent;
    if (transcript?.id !== undefined) chunk.id = transcript.id;
    if (transcript?.model !== undefined) chunk.model = transcript.model;
    if (transcript?.created !== undefined) chunk.created = transcript.created;
    let news = chunk.usage !== undefined && chunk.usage !== null;
    if (news) chunk.usage = addUsage(this.usageBefore, chunk.usage!) ?? null;
    for (const choice of chunk.choices) {
      const delta = choice.delta as JsonRecord | undefined;
      if (delta !== undefined && delta !== null) {
        delete delta.role;
        if (typeof delta.content === "string" && this.skip !== "") delta.content = this.skipRepeated(delta.content);
        if (saysSomething(delta)) news = true;
      }
      if (choice.finish_reason || choice.logprobs) news = true;
    }
    if (!news) return false;
    assembler?.add(chunk);
    transcript?.add(chunk);
    return true;
  }

  /** `content` without the whitespace the client already has at its start. */
  private skipRepeated(content: string): string {
    let i = 0;
    while (i < content.length && i < this.skip.length && content[i] === this.skip[i]) i++;
    // All of `content` was repeated whitespace: the next delta may repeat the rest.
    this.skip = i === content.length ? this.skip.slice(i) : "";
    return content.slice(i);
  }
}
