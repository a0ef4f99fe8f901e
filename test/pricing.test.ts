/**
 * Pricing (README, "Pricing"): each request's cost at the configured price of the model that
 * answered, in the access log; a key naming no configured model is refused at start.
 */
import { describe, expect, it } from "vitest";
import { createRouter } from "@modelmux/core";
import { createLogger } from "../core/src/logger.ts";
import { createPricing } from "../core/src/operations/pricing.ts";
import { silentLogger, startHarness, testConfig } from "./helpers/harness.ts";

describe("createPricing", () => {
  const pricing = createPricing({ "openai/gpt-4o": { input: 2.5, cached_input: 1.25, output: 10 }, "a/b": { input: 1, output: 2 } });

  it("prices input, cached input and output per million tokens", () => {
    expect(pricing.costOf("openai/gpt-4o", { prompt_tokens: 1_000_000, completion_tokens: 0 })).toBeCloseTo(2.5, 10);
    expect(pricing.costOf("openai/gpt-4o", { prompt_tokens: 1000, completion_tokens: 100, prompt_tokens_details: { cached_tokens: 400 } })).toBeCloseTo((600 * 2.5 + 400 * 1.25 + 100 * 10) / 1e6, 12);
    // The Responses API's names.
    expect(pricing.costOf("a/b", { input_tokens: 10, output_tokens: 5 })).toBeCloseTo(20 / 1e6, 12);
  });

  it("has no cost without a price or a usage", () => {
    expect(pricing.costOf("x/y", { prompt_tokens: 10, completion_tokens: 1 })).toBeUndefined();
    expect(pricing.costOf("a/b", undefined)).toBeUndefined();
    expect(pricing.costOf(undefined, { prompt_tokens: 1 })).toBeUndefined();
  });
});

describe("pricing in the config", () => {
  it("refuses a key that names no configured model, naming it", async () => {
    const config = testConfig({ echo: { plugin: "provider-echo", models: ["echo-1"] } }, { pricing: { "echo/echo-2": { input: 1, output: 1 } } });
    await expect(createRouter(config, { logger: silentLogger() })).rejects.toThrow(/pricing\\.echo\/echo-2|pricing\["echo\/echo-2"\]|pricing.*echo\/echo-2.*not a configured model/);
  });

  it("refuses a price without output, or a negative one", async () => {
    for (const price of [{ input: 1 }, { input: -1, output: 1 }]) {
      const config = testConfig({ echo: { plugin: "provider-echo", models: ["echo-1"] } }, { pricing: { "echo/echo-1": price as never } });
      await expect(createRouter(config, { logger: silentLogger() })).rejects.toThrow(/pricing/);
    }
  });

  it("logs each request's cost", async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: "info", format: "json", write: (text) => lines.push(...text.split("\n").filter(Boolean)) });
    const config = testConfig({ echo: { plugin: "provider-echo", models: ["echo-1"] } }, { pricing: { "echo/echo-1": { input: 2, output: 8 } } });
    const h = await startHarness(config, "http", { logger });
    try {
      const completion = await h.openai.chat.completions.create({ model: "echo/echo-1", messages: [{ role: "user", content: "price me" }] });
      const usage = completion.usage!;
      await expect.poll(() => (logger.flush(), lines.some((line) => line.includes("/v1/chat/completions")))).toBe(true);
      const line = JSON.parse(lines.find((entry) => entry.includes("/v1/chat/completions"))!) as Record<string, unknown>;
      expect(line.cost_usd).toBeCloseTo((usage.prompt_tokens * 2 + usage.completion_tokens * 8) / 1e6, 12);
    } finally {
      await h.close();
    }
  });
});
