/**
 * End-to-end: the capability check (docs/interface.md, "Models and capabilities") over both
 * transports. Capability overrides in the config (per provider and per model) turn features off on
 * an injected provider that has them all; a request that uses a missing feature gets 400
 * `unsupported_feature` and never reaches it.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { CAPABILITY_NAMES, type Capabilities } from "@modelmux/core";
import { postJson, readSse, startHarness, testConfig, TRANSPORTS, type Harness } from "./helpers/harness.ts";
import { createProbe } from "./helpers/probe-provider.ts";

const ALL_ON = Object.fromEntries(CAPABILITY_NAMES.map((name) => [name, true])) as Capabilities;

/** A provider whose every model has every capability, so the config alone turns features off. */
const { plugin: probePlugin, state: { calls }, reset: resetProbe } = createProbe({ capabilities: ALL_ON });

const OFF = { tools: false, vision: false, n: false, logprobs: false, json_schema: false, reasoning_effort: false, streaming: false, parallel_tool_calls: false };
const config = testConfig(
  {
    full: { plugin: "probe", models: ["all"] },
    lean: { plugin: "probe", capabilities: OFF, models: ["basic", { id: "tooly", capabilities: { tools: true } }] },
    mixed: { plugin: "probe", models: [{ id: "blind", capabilities: { vision: false } }, "sighted"] },
    echo: { plugin: "provider-echo", models: ["echo-1"] },
  },
  { aliases: { cheap: "lean/basic" } },
);

const CHAT = "/v1/chat/completions";
const user = { role: "user", content: "What is the weather in Paris?" };
const tool = { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } };
const image = { role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } }] };

/** Each feature: the request fields that use it, the field named in `param`, and the message's words. */
const FEATURES: Array<[string, Record<string, unknown>, string, string]> = [
  ["tools", { tools: [tool] }, "tools", "tools"],
  ["vision", { messages: [image] }, "messages", "image inputs (vision)"],
  ["n", { n: 2 }, "n", "more than one choice (n > 1)"],
  ["logprobs", { logprobs: true, top_logprobs: 2 }, "logprobs", "logprobs"],
  ["json_schema", { response_format: { type: "json_schema", json_schema: { name: "w", schema: { type: "object" } } } }, "response_format", "response_format json_schema"],
  ["reasoning_effort", { reasoning_effort: "low" }, "reasoning_effort", "reasoning_effort"],
  ["streaming", { stream: true }, "stream", "streaming"],
  ["parallel_tool_calls", { tools: [tool], parallel_tool_calls: true }, "parallel_tool_calls", "parallel tool calls"],
];

/** Asserts the exact 400 `unsupported_feature`: the contract's words, then the config that turns the feature on. */
async function expectUnsupported(res: Response, model: string, param: string, feature: string, capability = param): Promise<void> {
  const text = await res.text();
  const provider = model.slice(0, model.indexOf("/"));
  expect(res.status, text).toBe(400);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(res.headers.get("x-request-id")).toMatch(/\S/);
  expect(JSON.parse(text)).toEqual({
    error: {
      message: `Model '${model}' does not support ${feature}; if it does, set capabilities: { ${capability}: true } on providers.${provider}, or on its entry in providers.${provider}.models`,
      type: "invalid_request_error",
      code: "unsupported_feature",
      param,
    },
  });
}

for (const transport of TRANSPORTS) {
  describe(transport, () => {
    let h: Harness;
    beforeAll(async () => (h = await startHarness(config, transport, { plugins: { probe: probePlugin } })));
    afterAll(() => h.close());
    beforeEach(resetProbe);

    describe.each(FEATURES)("%s", (capability, fields, param, feature) => {
      const body = (model: string) => ({ model, messages: [user], ...fields });

      test("is refused where the provider block turns it off, before the provider is called", async () => {
        // lean/tooly has tools back, so parallel tool calls are the first thing it lacks.
        const model = capability === "parallel_tool_calls" ? "lean/tooly" : "lean/basic";
        await expectUnsupported(await h.request(CHAT, postJson(body(model))), model, param, feature, capability);
        expect(calls).toEqual([]);
      });

      test("is served where the model has it", async () => {
        const res = await h.request(CHAT, postJson(body("full/all")));
        expect(res.status, await res.clone().text()).toBe(200);
        if (fields.stream) expect((await readSse(res)).at(-1)).toBe("[DONE]");
        else expect(await res.json()).toMatchObject({ object: "chat.completion" });
        expect(calls).toEqual(["full/all"]);
      });
    });

    test("a model entry's override wins over its provider block; the block still applies to the rest", async () => {
      expect((await h.request(CHAT, postJson({ model: "lean/tooly", messages: [user], tools: [tool] }))).status).toBe(200);
      expect(calls).toEqual(["lean/tooly"]);
      await expectUnsupported(await h.request(CHAT, postJson({ model: "lean/tooly", messages: [user], n: 3 })), "lean/tooly", "n", "more than one choice (n > 1)");
      expect(calls).toHaveLength(1);
    });

    test("a model entry's override touches that model only", async () => {
      await expectUnsupported(await h.request(CHAT, postJson({ model: "mixed/blind", messages: [image] })), "mixed/blind", "messages", "image inputs (vision)", "vision");
      expect((await h.request(CHAT, postJson({ model: "mixed/sighted", messages: [image] }))).status).toBe(200);
      expect(calls).toEqual(["mixed/sighted"]);
    });

    test("an alias is checked as its model and the message names the model", async () => {
      await expectUnsupported(await h.request(CHAT, postJson({ model: "cheap", messages: [user], tools: [tool] })), "lean/basic", "tools", "tools");
      expect((await h.request(CHAT, postJson({ model: "cheap", messages: [user] }))).status).toBe(200);
      expect(calls).toEqual(["lean/basic"]);
    });

    test("a plugin's own defaults apply: echo has tools but not logprobs", async () => {
      await expectUnsupported(await h.request(CHAT, postJson({ model: "echo/echo-1", messages: [user], logprobs: true })), "echo/echo-1", "logprobs", "logprobs");
      expect((await h.request(CHAT, postJson({ model: "echo/echo-1", messages: [user], tools: [tool] }))).status).toBe(200);
    });

    test("a field set to its 'off' value does not use the feature", async () => {
      const off = { n: 1, logprobs: false, stream: false, reasoning_effort: null, response_format: { type: "text" }, parallel_tool_calls: false };
      const res = await h.request(CHAT, postJson({ model: "lean/basic", messages: [user], ...off }));
      expect(res.status, await res.text()).toBe(200);
      expect(calls).toEqual(["lean/basic"]);
    });

    test("the SDK gets BadRequestError with code and param, for JSON and for a stream", async () => {
      const refused = [
        h.openai.chat.completions.create({ model: "lean/basic", messages: [{ role: "user", content: "hi" }], tools: [{ type: "function", function: { name: "f" } }] }),
        h.openai.chat.completions.create({ model: "lean/basic", messages: [{ role: "user", content: "hi" }], stream: true }),
      ];
      const [tools, stream] = await Promise.all(refused.map((p) => p.then(() => new Error("expected a 400"), (e: unknown) => e)));
      expect(tools).toBeInstanceOf(OpenAI.BadRequestError);
      expect(tools).toMatchObject({ status: 400, type: "invalid_request_error", code: "unsupported_feature", param: "tools" });
      expect((tools as Error).message).toContain("Model 'lean/basic' does not support tools");
      expect(stream).toBeInstanceOf(OpenAI.BadRequestError);
      expect(stream).toMatchObject({ status: 400, code: "unsupported_feature", param: "stream" });
      expect(calls).toEqual([]);
    });
  });
}
