/**
 * Stream continuation through provider-openai (README, "Stream continuation"): `prefill_style` says
 * how a continuation's final assistant message is marked on the wire, and `prefill` stays off until
 * the config switches it on for a provider or a model.
 */
import { describe, expect, it } from "vitest";
import { createLogger, createRouter, type ChatRequest, type ModelmuxConfig } from "@modelmux/core";
import { startFakeOpenAI } from "../../../test/fixtures/fake-openai.ts";
import { useProviderCalls } from "../../../test/helpers/provider-call.ts";
import { openaiCapabilities } from "../src/capabilities.ts";
import plugin from "../src/index.ts";

const t = useProviderCalls({ plugin, model: "mistral-large-latest", start: () => startFakeOpenAI(), options: (fake) => ({ base_url: fake.url }) });
const USER = { role: "user" as const, content: "Count to five" };
const PREFILL = { role: "assistant" as const, content: "One, two," };
const continued = (extra: Partial<ChatRequest> = {}): ChatRequest => ({ model: "mistral-large-latest", messages: [USER, PREFILL], stream: false, ...extra });

describe("prefill_style", () => {
  it.each([
    [undefined, {}, {}],
    ["plain", {}, {}],
    ["prefix", { prefix: true }, {}],
    ["continue_final_message", {}, { continue_final_message: true, add_generation_prompt: false }],
  ] as const)("%s marks a continuation as the server wants, JSON and streamed", async (style, onMessage, onBody) => {
    const provider = await t.provider({ prefill_style: style });
    await provider.chat(continued(), t.call({ continuation: true }));
    await (await provider.chatStreamEvents!(continued({ stream: true }), t.call({ continuation: true }))).body.text();
    expect(t.fake.requests[0]?.body).toEqual({ model: "mistral-large-latest", messages: [USER, { ...PREFILL, ...onMessage }], stream: false, ...onBody });
    expect(t.fake.requests[1]?.body).toEqual({ model: "mistral-large-latest", messages: [USER, { ...PREFILL, ...onMessage }], stream: true, ...onBody });
  });

  it("leaves a request that is not a continuation as the client sent it", async () => {
    await (await t.provider({ prefill_style: "prefix" })).chat(continued(), t.call());
    await (await t.provider({ prefill_style: "continue_final_message" })).chat(continued(), t.call());
    for (const request of t.fake.requests) expect(request.body).toEqual({ model: "mistral-large-latest", messages: [USER, PREFILL], stream: false });
  });
});

describe("with the core's loader", () => {
  const models = ["mistral-large-latest", { id: "open-mistral-nemo", capabilities: { prefill: true } }];
  const start = (block: Record<string, unknown>) =>
    createRouter(
      { auth: { api_keys: [{ key: "sk-test-continuation" }] }, providers: { mistral: { plugin: "provider-openai", base_url: "http://127.0.0.1:9/v1", models, ...block } } } as ModelmuxConfig,
      { env: {}, logger: createLogger({ level: "silent" }), plugins: { "provider-openai": plugin } },
    );

  it("refuses an unknown prefill_style before the server starts, naming the option", async () => {
    const error = await start({ prefill_style: "suffix" }).then(
      async (router) => router.close(),
      (e: unknown) => e,
    );
    expect(String(error)).toMatch(/prefill_style/);
  });

  it("keeps prefill off unless the config switches it on, for the provider or a model", async () => {
    for (const model of ["gpt-4o", "gpt-5", "o3", "gpt-4", "llama-3.3-70b", "mistral-large-latest"]) expect(openaiCapabilities(model).prefill ?? false, model).toBe(false);
    const off = await start({ prefill_style: "prefix" });
    expect(off.models.resolve("mistral/mistral-large-latest").capabilities.prefill).toBe(false);
    expect(off.models.resolve("mistral/open-mistral-nemo").capabilities.prefill).toBe(true);
    await off.close();
    const on = await start({ prefill_style: "prefix", capabilities: { prefill: true } });
    expect(on.models.resolve("mistral/mistral-large-latest").capabilities.prefill).toBe(true);
    await on.close();
  });
});
