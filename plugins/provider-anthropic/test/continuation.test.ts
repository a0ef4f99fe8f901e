/**
 * Stream continuation (docs/plugins.md, "Stream continuation"): a final assistant message is the
 * last Anthropic turn, so Claude continues it; for a continuation (`call.continuation`) the body
 * asks for no extended thinking and the final text has no trailing whitespace, both of which
 * Anthropic refuses in a prefill. The mapping alone, then the plugin against the fake upstream.
 */
import { describe, expect, it } from "vitest";
import type { MessageCreateParams } from "@anthropic-ai/sdk/resources/messages/messages";
import type { ChatMessage, ChatRequest } from "@modelmux/core";
import { startFakeAnthropic } from "../../../test/fixtures/fake-anthropic.ts";
import { collect, useProviderCalls } from "../../../test/helpers/provider-call.ts";
import { toAnthropicRequest } from "../src/request.ts";
import plugin from "../src/index.ts";

const OPTIONS = { defaultMaxTokens: 4096 };
const CONTINUATION = { ...OPTIONS, continuation: true };
const prefilled = (prefill: ChatMessage["content"], extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model: "anthropic/x",
  messages: [
    { role: "user", content: "Count to five" },
    { role: "assistant", content: prefill },
  ],
  ...extra,
});

describe("toAnthropicRequest: a final assistant message", () => {
  it("is the last Anthropic message, so Claude continues it", () => {
    const body = toAnthropicRequest(prefilled("One, two,"), "claude-sonnet-4-5", CONTINUATION);
    expect(body.messages).toEqual([
      { role: "user", content: "Count to five" },
      { role: "assistant", content: "One, two," },
    ]);
  });

  it("asks for no extended thinking in a continuation, and keeps temperature", () => {
    const request = prefilled("One, two,", { reasoning_effort: "high", temperature: 0.4 });
    expect(toAnthropicRequest(request, "claude-sonnet-4-5", OPTIONS)).toHaveProperty("thinking");
    const body = toAnthropicRequest(request, "claude-sonnet-4-5", CONTINUATION);
    expect(body).not.toHaveProperty("thinking");
    expect(body).toMatchObject({ max_tokens: 4096, temperature: 0.4 });
  });

  it("loses its trailing whitespace in a continuation, as a string or as its last text block", () => {
    expect(toAnthropicRequest(prefilled("One, two, \n"), "m", CONTINUATION).messages.at(-1)).toEqual({ role: "assistant", content: "One, two," });
    const parts = prefilled([
      { type: "text", text: "One," },
      { type: "text", text: " two,  ", cache_control: { type: "ephemeral" } },
    ]);
    expect(toAnthropicRequest(parts, "m", CONTINUATION).messages.at(-1)?.content).toEqual([
      { type: "text", text: "One," },
      { type: "text", text: " two,", cache_control: { type: "ephemeral" } },
    ]);
    // Outside a continuation the client's own prefill is sent as it is.
    expect(toAnthropicRequest(prefilled("One, two, "), "m", OPTIONS).messages.at(-1)?.content).toBe("One, two, ");
  });

  it("drops a final text block, or turn, that whitespace alone made", () => {
    const parts = prefilled([
      { type: "text", text: "One," },
      { type: "text", text: " \n", cache_control: { type: "ephemeral" } },
    ]);
    expect(toAnthropicRequest(parts, "m", CONTINUATION).messages.at(-1)?.content).toEqual([{ type: "text", text: "One," }]);
    expect(toAnthropicRequest(prefilled("  "), "m", CONTINUATION).messages).toEqual([{ role: "user", content: "Count to five" }]);
  });
});

describe("the plugin, for a call with continuation", () => {
  const KEY = "sk-ant-api03-continuation-test-key-1234";
  const t = useProviderCalls({ plugin, model: "claude-sonnet-4-5", start: () => startFakeAnthropic({ apiKey: KEY }), options: (fake) => fake.options });
  const sent = (i = 0) => t.fake.requests[i]?.body as MessageCreateParams;

  it("sends the prefill last, trimmed, without thinking, and answers the continuation (JSON)", async () => {
    t.fake.next({ text: " three, four, five." });
    const completion = await (await t.provider()).chat(prefilled("One, two, ", { reasoning_effort: "medium" }), t.call({ continuation: true }));
    expect(completion.choices[0]?.message.content).toBe(" three, four, five.");
    expect(sent().messages.at(-1)).toEqual({ role: "assistant", content: "One, two," });
    expect(sent()).not.toHaveProperty("thinking");
  });

  it("does the same for a stream", async () => {
    t.fake.next({ text: " three, four, five." });
    const request = prefilled("One, two,", { reasoning_effort: "low", stream: true, stream_options: { include_usage: true } });
    const chunks = await collect(await (await t.provider()).chatStream!(request, t.call({ continuation: true })), "object");
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe(" three, four, five.");
    expect(sent()).toMatchObject({ stream: true, messages: [{ role: "user" }, { role: "assistant", content: "One, two," }] });
    expect(sent()).not.toHaveProperty("thinking");
  });

  it("thinks as asked when the call is not a continuation", async () => {
    await (await t.provider()).chat(prefilled("One, two,", { reasoning_effort: "medium" }), t.call());
    expect(sent().thinking).toEqual({ type: "enabled", budget_tokens: 4096 });
  });
});
