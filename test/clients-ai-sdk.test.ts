/**
 * The AI SDK (`ai` with `@ai-sdk/openai`) against the router, offline: `createOpenAI({ baseURL,
 * apiKey })` with `.chat(model)` (chat completions) and `.responses(model)` (the Responses API).
 * `generateObject` with a zod schema gets an object that parses; `generateText` with a tool and
 * `stopWhen` runs the tool once and its output ends the loop.
 */
import { createOpenAI } from "@ai-sdk/openai";
import { generateObject, generateText, stepCountIs, streamText, tool, type LanguageModel } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Harness } from "./helpers/harness.ts";
import { ECHO_MODEL, loopbackOnly, startEchoRouter, TEST_KEY } from "./helpers/echo-clients.ts";

let h: Harness;
let guard: ReturnType<typeof loopbackOnly>;
let provider: ReturnType<typeof createOpenAI>;
/** The paths the provider called, to tell which API a mode used. */
const paths: string[] = [];

beforeAll(async () => {
  guard = loopbackOnly();
  h = await startEchoRouter();
  const fetchRecorded: typeof fetch = (input, init) => {
    paths.push(new URL(input instanceof Request ? input.url : String(input)).pathname);
    return fetch(input, init);
  };
  provider = createOpenAI({ baseURL: h.baseURL, apiKey: TEST_KEY, fetch: fetchRecorded });
});
afterAll(async () => {
  await h.close();
  guard.restore();
  expect(guard.refused).toEqual([]);
});

const Recipe = z.object({ title: z.string(), servings: z.number().int().min(1), tags: z.array(z.string()), vegan: z.boolean() });

const weather = tool({
  description: "The weather in a city",
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => `sunny in ${city}`,
});

describe.each([
  ["chat completions (.chat)", () => provider.chat(ECHO_MODEL), "/v1/chat/completions"],
  ["the Responses API (.responses)", () => provider.responses(ECHO_MODEL), "/v1/responses"],
] as const)("the AI SDK on %s", (_mode, model: () => LanguageModel, path) => {
  it("generateObject with a zod schema: the object parses", async () => {
    paths.length = 0;
    const { object } = await generateObject({ model: model(), schema: Recipe, prompt: "Pancakes", maxRetries: 0 });
    expect(Recipe.parse(object)).toEqual({ title: "Pancakes", servings: 1, tags: [], vegan: false });
    expect(paths).toEqual([path]);
  });

  it("generateText with a tool and stopWhen: the tool runs once, its output ends the loop", async () => {
    const prompt = "What is the weather in Paris? Use get_weather.";
    const result = await generateText({ model: model(), tools: { get_weather: weather }, stopWhen: stepCountIs(5), prompt, maxRetries: 0 });
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0]!.toolCalls).toMatchObject([{ toolName: "get_weather", input: { city: prompt } }]);
    expect(result.steps[0]!.toolResults).toMatchObject([{ toolName: "get_weather", output: `sunny in ${prompt}` }]);
    expect(result.finishReason).toBe("stop");
    expect(result.text).toBe(`Tool get_weather returned: sunny in ${prompt}`);
  });

  it("streamText with the same tool loop", async () => {
    const result = streamText({ model: model(), tools: { get_weather: weather }, stopWhen: stepCountIs(5), prompt: "use get_weather", maxRetries: 0 });
    let text = "";
    for await (const delta of result.textStream) text += delta;
    expect((await result.steps).length).toBe(2);
    expect(text).toBe("Tool get_weather returned: sunny in use get_weather");
  });
});
