/**
 * A model of a provider that is configured but off because a `requires_env` variable was not set
 * (README, "Models and capabilities"): 404 `model_not_found` whose message names the provider and
 * the variables that turn it on, on every endpoint that takes a model; a name the config never had
 * still "does not exist".
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postJson, startHarness, testConfig, TRANSPORTS, type Harness } from "./helpers/harness.ts";

const CONFIG = testConfig(
  {
    echo: { plugin: "provider-echo", models: ["echo-1"] },
    openai: { plugin: "provider-openai", api_key: "${OPENAI_API_KEY:-}", requires_env: ["OPENAI_API_KEY"], models: ["gpt-4o", "gpt-image-1"] },
    azure: { plugin: "provider-openai", requires_env: ["AZURE_KEY", "AZURE_BASE", "AZURE_SET"], models: [{ id: "gpt-4o-mini" }] },
  },
  { aliases: { smart: "openai/gpt-4o", fast: "echo/echo-1" } },
);
const ENV = { AZURE_SET: "yes" };

async function notFound(call: Promise<unknown>): Promise<{ message: string; code: unknown; param: unknown }> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpenAI.NotFoundError);
  const { message, code, param } = error as InstanceType<typeof OpenAI.NotFoundError>;
  return { message, code, param };
}

for (const transport of TRANSPORTS) {
  describe(`models of a provider that is off (${transport})`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await startHarness(CONFIG, transport, { env: ENV });
    });
    afterAll(() => h.close());

    it("chat: 404 model_not_found naming the variable that turns the provider on", async () => {
      const error = await notFound(h.openai.chat.completions.create({ model: "openai/gpt-4o", messages: [{ role: "user", content: "hi" }] }));
      expect(error.code).toBe("model_not_found");
      expect(error.param).toBe("model");
      expect(error.message).toContain("The model 'openai/gpt-4o' is off: its provider 'openai' requires OPENAI_API_KEY, not set when the router started.");
      expect(error.message).toContain("Set OPENAI_API_KEY in the router's environment and restart it to use openai/gpt-4o.");
    });

    it("images and an alias of such a model say the same", async () => {
      const images = await notFound(h.openai.images.generate({ model: "openai/gpt-image-1", prompt: "a fox", response_format: "url" }));
      expect(images.message).toContain("Set OPENAI_API_KEY in the router's environment and restart it to use openai/gpt-image-1.");
      const alias = await notFound(h.openai.chat.completions.create({ model: "smart", messages: [{ role: "user", content: "hi" }] }));
      expect(alias.message).toContain("The model 'smart' is off: its provider 'openai' requires OPENAI_API_KEY");
    });

    it("names only the variables that are missing", async () => {
      const error = await notFound(h.openai.chat.completions.create({ model: "azure/gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }));
      expect(error.message).toContain("its provider 'azure' requires AZURE_KEY and AZURE_BASE, not set");
      expect(error.message).not.toContain("AZURE_SET");
    });

    it("keeps 'does not exist' for a name the config does not have, and serves the providers that are on", async () => {
      const error = await notFound(h.openai.chat.completions.create({ model: "openai/gpt-5", messages: [{ role: "user", content: "hi" }] }));
      expect(error.message).toContain("The model 'openai/gpt-5' does not exist.");
      const reply = await h.request("/v1/chat/completions", postJson({ model: "fast", messages: [{ role: "user", content: "hi" }] }));
      expect(reply.status).toBe(200);
      await reply.arrayBuffer();
    });
  });
}
