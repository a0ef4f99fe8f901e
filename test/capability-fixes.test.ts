/**
 * A capability refusal names the config that turns the feature on (docs/interface.md, "Models and
 * capabilities"): the message keeps the contract's start, `Model 'x/y' does not support <feature>`,
 * and goes on with where to set `capabilities`, on chat, images and the responses API, as the openai
 * SDK shows it. A field the plugin declares (an image option) has no config fix and names none.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHarness, testConfig, TRANSPORTS, type Harness } from "./helpers/harness.ts";

const config = testConfig(
  {
    echo: {
      plugin: "provider-echo",
      models: [
        "echo-1",
        { id: "plain", capabilities: { json_schema: false, responses: false, images: false } },
        { id: "still", capabilities: { streaming: false } },
      ],
    },
    other: { plugin: "provider-echo", models: ["echo-2"] },
  },
  { responses: { provider: "echo" } },
);

const user = [{ role: "user" as const, content: "Extract the city: Paris." }];
const schema = { type: "json_schema" as const, json_schema: { name: "city", schema: { type: "object", properties: { city: { type: "string" } } } } };

/** The 400 a call got, as the SDK throws it. */
async function refusal(call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.BadRequestError>> {
  const error = await call.then(
    () => new Error("expected a 400"),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpenAI.BadRequestError);
  return error as InstanceType<typeof OpenAI.BadRequestError>;
}

for (const transport of TRANSPORTS) {
  describe(`capability refusals name the fix (${transport})`, () => {
    let h: Harness;
    beforeAll(async () => (h = await startHarness(config, transport)));
    afterAll(() => h.close());

    it("chat: json_schema, as LangChain's withStructuredOutput sends it", async () => {
      const error = await refusal(h.openai.chat.completions.create({ model: "echo/plain", messages: user, response_format: schema }));
      expect(error).toMatchObject({ code: "unsupported_feature", param: "response_format" });
      expect(error.error).toMatchObject({
        message:
          "Model 'echo/plain' does not support response_format json_schema; if it does, set capabilities: { json_schema: true } on providers.echo, or on its entry in providers.echo.models",
      });
    });

    it("images: the images capability; an option the plugin does not take names no config", async () => {
      const error = await refusal(h.openai.images.generate({ model: "echo/plain", prompt: "a red square" }));
      expect(error.error).toMatchObject({
        param: "model",
        message: "Model 'echo/plain' does not support images; if it does, set capabilities: { images: true } on providers.echo, or on its entry in providers.echo.models",
      });
      const option = await refusal(h.openai.images.generate({ model: "echo/echo-1", prompt: "a red square", style: "vivid" }));
      expect(option.error).toMatchObject({ param: "style", message: "Model 'echo/echo-1' does not support style" });
    });

    it("responses: a model without the capability, a stream on one without streaming", async () => {
      const off = await refusal(h.openai.responses.create({ model: "echo/plain", input: "hi" }));
      expect(off.error).toMatchObject({
        code: "unsupported_feature",
        param: "model",
        message: "Model 'echo/plain' does not support responses; if it does, set capabilities: { responses: true } on providers.echo, or on its entry in providers.echo.models",
      });
      const still = await refusal(h.openai.responses.create({ model: "echo/still", input: "hi", stream: true }));
      expect(still.error).toMatchObject({
        param: "stream",
        message: "Model 'echo/still' does not support streaming; if it does, set capabilities: { streaming: true } on providers.echo, or on its entry in providers.echo.models",
      });
    });

    it("responses: a model of another provider names responses.provider", async () => {
      const error = await refusal(h.openai.responses.create({ model: "other/echo-2", input: "hi" }));
      expect(error.error).toMatchObject({
        code: "unsupported_feature",
        param: "model",
        message:
          "Model 'other/echo-2' does not support responses: /v1/responses is forwarded to provider 'echo' only; name one of providers.echo.models, or set responses.provider to 'other' if that provider serves it",
      });
    });
  });
}
