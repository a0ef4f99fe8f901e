/** Small client-side helpers the conformance kit uses to read the router's replies. */
import type { ChatCompletionChunk } from "../types/chat.ts";

/** The `data:` payloads of an SSE body, `[DONE]` included, in order. */
export async function readSseData(response: Response): Promise<string[]> {
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((block) => block.startsWith("data: "))
    .map((block) => block.slice("data: ".length));
}

/** The chunks of a stream (without `[DONE]` and error events). */
export function parseChunks(data: readonly string[]): ChatCompletionChunk[] {
  return data.filter((d) => d !== "[DONE]" && !d.startsWith('{"error"')).map((d) => JSON.parse(d) as ChatCompletionChunk);
}

/** Concatenated content deltas of choice 0. */
export function streamedText(chunks: readonly ChatCompletionChunk[]): string {
  return chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
}

/** Tool calls of choice 0, reassembled from their deltas by index. */
export function streamedToolCalls(chunks: readonly ChatCompletionChunk[]): Array<{ id?: string; name: string; arguments: string }> {
  const calls: Array<{ id?: string; name: string; arguments: string }> = [];
  for (const chunk of chunks) {
    for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
      const call = (calls[delta.index] ??= { name: "", arguments: "" });
      if (delta.id) call.id = delta.id;
      if (delta.function?.name) call.name += delta.function.name;
      if (delta.function?.arguments) call.arguments += delta.function.arguments;
    }
  }
  return calls;
}
