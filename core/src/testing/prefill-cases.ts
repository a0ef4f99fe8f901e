/**
 * The conformance case of a model that declares `prefill` (docs/plugins.md, "Stream
 * continuation"): a continuation call (`call.continuation`, the request ending with the assistant's
 * text so far) gets an ordinary answer, JSON and streamed, with the same text either way. The core
 * makes such calls itself, so the kit calls the provider directly, with the call the core would
 * make. A model without `prefill` skips it.
 */
import { expect, it } from "vitest";
import type { Provider, ProviderCall } from "../plugin.ts";
import type { ChatCompletionChunk, ChatRequest, ChatStreamItem } from "../types/chat.ts";
import { streamedText } from "./sse-client.ts";
import type { KitContext } from "./test-provider.ts";

/** The chunks of a provider's stream, however it streams: items (objects or JSON texts) or a relayed SSE body. */
async function streamChunks(provider: Provider, request: ChatRequest, call: ProviderCall): Promise<ChatCompletionChunk[]> {
  const chunk = (item: ChatStreamItem) => (typeof item === "string" ? (JSON.parse(item) as ChatCompletionChunk) : item);
  if (provider.chatStreamEvents) {
    const text = await (await provider.chatStreamEvents(request, call)).body.text();
    const data = text.split("\n").filter((line) => line.startsWith("data: ") && line !== "data: [DONE]");
    return data.map((line) => JSON.parse(line.slice("data: ".length)) as ChatCompletionChunk);
  }
  const chunks: ChatCompletionChunk[] = [];
  for await (const read of await provider.chatStream!(request, call)) {
    for (const item of Array.isArray(read) ? (read as readonly ChatStreamItem[]) : [read as ChatStreamItem]) chunks.push(chunk(item));
  }
  return chunks;
}

export function prefillCases(kit: () => KitContext): void {
  it("answers a continuation (call.continuation, a final assistant message) when the model declares prefill", async (test) => {
    const entry = kit().router.models.resolve(kit().model);
    if (!entry.capabilities.prefill) return test.skip();
    const call = (): ProviderCall => ({ model: entry.model, signal: new AbortController().signal, timeoutMs: 5_000, requestId: "req_kit_continuation", continuation: true });
    const messages: ChatRequest["messages"] = [
      { role: "user", content: "one two three four five" },
      { role: "assistant", content: "one two" },
    ];
    kit().upstream?.next({ text: " three four five" });
    const json = await entry.instance.chat({ model: entry.model, messages, stream: false }, call());
    expect(json).toMatchObject({ object: "chat.completion", choices: [{ index: 0, message: { role: "assistant" } }] });
    expect(typeof json.choices[0]!.message.content).toBe("string");
    expect(["stop", "length"]).toContain(json.choices[0]!.finish_reason);

    kit().upstream?.next({ text: " three four five" });
    const request: ChatRequest = { model: entry.model, messages, stream: true, stream_options: { include_usage: true } };
    const chunks = await streamChunks(entry.instance, request, call());
    expect(streamedText(chunks)).toBe(json.choices[0]!.message.content);
    expect(chunks.some((c) => c.choices[0]?.finish_reason)).toBe(true);
  });
}
