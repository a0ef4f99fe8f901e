/**
 * The provider kit's continuation bodies (docs/plugins.md, "Stream continuation"): an OpenAI-shaped
 * provider marks the final assistant message as its `prefillStyle` says, only for a call with
 * `continuation`, JSON and streamed, against a fake OpenAI upstream on 127.0.0.1 that records what
 * it received.
 */
import { describe, expect, it } from "vitest";
import { defineOpenAIShapedProvider, toOpenAIContinuationRequest, type ChatRequest, type PrefillStyle } from "../src/index.ts";
import { startFakeOpenAI } from "../../test/fixtures/fake-openai.ts";
import { useProviderCalls } from "../../test/helpers/provider-call.ts";

const USER = { role: "user" as const, content: "Count to five" };
const PREFILL = { role: "assistant" as const, content: "One, two," };
const continued = (extra: Partial<ChatRequest> = {}): ChatRequest => ({ model: "acme-1", messages: [USER, PREFILL], stream: false, ...extra });

describe("toOpenAIContinuationRequest", () => {
  it("marks the final assistant message with prefix, or the body with continue_final_message", () => {
    const request = continued({ temperature: null });
    expect(toOpenAIContinuationRequest(request, "m", "plain")).toEqual({ model: "m", messages: [USER, PREFILL], stream: false });
    expect(toOpenAIContinuationRequest(request, "m", "prefix")).toEqual({ model: "m", messages: [USER, { ...PREFILL, prefix: true }], stream: false });
    expect(toOpenAIContinuationRequest(request, "m", "continue_final_message")).toEqual({
      model: "m",
      messages: [USER, PREFILL],
      stream: false,
      continue_final_message: true,
      add_generation_prompt: false,
    });
    // The request itself is left as it was.
    expect(request.messages[1]).toEqual(PREFILL);
  });

  it("marks no message for prefix when the last one is not the assistant's", () => {
    expect(toOpenAIContinuationRequest({ model: "x", messages: [USER] }, "m", "prefix").messages).toEqual([USER]);
  });
});

/** A provider made with the kit, its `prefillStyle` given. */
const acme = (prefillStyle?: PrefillStyle) =>
  defineOpenAIShapedProvider({ name: "acme", baseUrl: "https://api.acme.example/v1", prefillStyle, capabilities: { prefixes: {}, fallback: { chat: true, streaming: true } } });

describe.each([
  ["no prefillStyle (plain)", undefined, {}, {}],
  ["prefix", "prefix", { prefix: true }, {}],
  ["continue_final_message", "continue_final_message", {}, { continue_final_message: true, add_generation_prompt: false }],
] as const)("a continuation with %s", (_, style, onMessage, onBody) => {
  const t = useProviderCalls({ plugin: acme(style), model: "acme-1", start: () => startFakeOpenAI(), options: (fake) => ({ base_url: fake.url }) });
  const expected = (stream: boolean) => ({ model: "acme-1", messages: [USER, { ...PREFILL, ...onMessage }], stream, ...onBody });

  it("marks the JSON request's body, and only when the call is a continuation", async () => {
    const provider = await t.provider();
    await provider.chat(continued(), t.call({ continuation: true }));
    await provider.chat(continued(), t.call());
    expect(t.fake.requests[0]?.body).toEqual(expected(false));
    expect(t.fake.requests[1]?.body).toEqual({ model: "acme-1", messages: [USER, PREFILL], stream: false });
  });

  it("marks the streamed request's body the same way", async () => {
    const events = await (await t.provider()).chatStreamEvents!(continued({ stream: true }), t.call({ continuation: true }));
    expect(await events.body.text()).toContain("data: [DONE]");
    expect(t.fake.requests[0]?.body).toEqual(expected(true));
  });
});
