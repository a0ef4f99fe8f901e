/**
 * `src/wire.ts` is a transcription of the official SDK's types: a body built from every kind of
 * request must type-check as the SDK's `MessageCreateParams` (checked by `tsc`), and the SDK's
 * client must be willing to send it unchanged (checked here, at run time, against the fake).
 */
import Anthropic from "@anthropic-ai/sdk";
import type { MessageCreateParamsBase } from "@anthropic-ai/sdk/resources/messages/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChatRequest } from "@modelmux/core";
import { startFakeAnthropic, type FakeAnthropic } from "../../../test/fixtures/fake-anthropic.ts";
import { toAnthropicRequest } from "../src/request.ts";

const EVERYTHING: ChatRequest = {
  model: "anthropic/claude-sonnet-4-5",
  messages: [
    { role: "system", content: [{ type: "text", text: "Rules", cache_control: { type: "ephemeral" } }] },
    { role: "user", content: [{ type: "text", text: "Look" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }, { type: "image_url", image_url: { url: "https://x.test/a.png" } }] },
    { role: "assistant", content: "Calling.", tool_calls: [{ id: "toolu_1", type: "function", function: { name: "f", arguments: '{"a":1}' } }] },
    { role: "tool", tool_call_id: "toolu_1", content: [{ type: "text", text: "done" }] },
  ],
  tools: [{ type: "function", function: { name: "f", description: "F", parameters: { type: "object", properties: { a: { type: "number" } } } } }],
  tool_choice: { type: "function", function: { name: "f" } },
  parallel_tool_calls: false,
  stop: ["END"],
  user: "alice",
  max_completion_tokens: 2000,
};

let fake: FakeAnthropic;
beforeAll(async () => {
  fake = await startFakeAnthropic();
});
afterAll(() => fake.close());

describe("wire types", () => {
  it("builds bodies that are the SDK's MessageCreateParams, which the SDK sends unchanged", async () => {
    const client = new Anthropic({ baseURL: fake.options.base_url, apiKey: null, defaultHeaders: { "x-api-key": fake.options.api_key }, maxRetries: 0 });
    const thinking: ChatRequest = { model: "x", messages: [{ role: "user", content: "Think" }], reasoning_effort: "medium", temperature: 0.5 };
    // Assigning is the type-level check: a drift between wire.ts and the SDK fails tsc here.
    const bodies: MessageCreateParamsBase[] = [EVERYTHING, thinking].map((r) => toAnthropicRequest(r, "claude-fake-1", { defaultMaxTokens: 4096 }));
    for (const body of bodies) await client.messages.create(body);
    expect(fake.requests.map((r) => r.body)).toEqual(bodies);
    expect(bodies[0]).toMatchObject({ tool_choice: { type: "tool", name: "f", disable_parallel_tool_use: true }, metadata: { user_id: "alice" } });
    expect(bodies[1]).toMatchObject({ thinking: { type: "enabled", budget_tokens: 4096 }, max_tokens: 4096 + 4096 });
  });
});
