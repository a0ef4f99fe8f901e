/**
 * The OpenAI Agents SDK (`@openai/agents`) against the router, offline: the echo model answers on the
 * Responses API (the SDK's default) and on chat completions. An agent with a function tool runs it
 * and the tool's output ends the loop; an agent with a zod `outputType` gets a final output that parses.
 */
import { Agent, OpenAIChatCompletionsModel, run, setDefaultOpenAIClient, setTracingDisabled, tool, type Model } from "@openai/agents";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Harness } from "./helpers/harness.ts";
import { ECHO_MODEL, loopbackOnly, startEchoRouter, TEST_KEY } from "./helpers/echo-clients.ts";

let h: Harness;
let guard: ReturnType<typeof loopbackOnly>;
let client: OpenAI;
/** The paths the client called, to tell which API a mode used. */
const paths: string[] = [];

beforeAll(async () => {
  guard = loopbackOnly();
  setTracingDisabled(true);
  h = await startEchoRouter();
  const fetchRecorded: typeof fetch = (input, init) => {
    paths.push(new URL(input instanceof Request ? input.url : String(input)).pathname);
    return fetch(input, init);
  };
  client = new OpenAI({ baseURL: h.baseURL, apiKey: TEST_KEY, maxRetries: 0, fetch: fetchRecorded });
  // The SDK's default: a model named by a string runs on this client, through the Responses API.
  setDefaultOpenAIClient(client);
});
afterAll(async () => {
  await h.close();
  guard.restore();
  expect(guard.refused).toEqual([]);
});

const weather = tool({
  name: "get_weather",
  description: "The weather in a city",
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => `sunny in ${city}`,
});

const Forecast = z.object({ city: z.string(), temperature: z.number(), unit: z.enum(["c", "f"]) });

const MODES: Array<[string, () => Model | string, string]> = [
  ["Responses API (the default)", () => ECHO_MODEL, "/v1/responses"],
  ["chat completions", () => new OpenAIChatCompletionsModel(client, ECHO_MODEL), "/v1/chat/completions"],
];

describe.each(MODES)("@openai/agents on the %s", (_mode, model, path) => {
  it("an agent calls its function tool, and the tool's output ends the loop", async () => {
    paths.length = 0;
    const agent = new Agent({ name: "forecaster", instructions: "Answer with the weather.", model: model(), tools: [weather] });
    const input = "What is the weather? Use get_weather.";
    const result = await run(agent, input, { maxTurns: 4 });
    expect(result.finalOutput).toBe(`Tool get_weather returned: sunny in ${input}`);
    const kinds = result.newItems.map((item) => item.type);
    expect(kinds).toEqual(["tool_call_item", "tool_call_output_item", "message_output_item"]);
    expect(paths).toEqual([path, path]);
  });

  it("the same run streamed", async () => {
    const agent = new Agent({ name: "forecaster", model: model(), tools: [weather] });
    const stream = await run(agent, "use get_weather", { stream: true, maxTurns: 4 });
    let events = 0;
    for await (const _event of stream) events++;
    await stream.completed;
    expect(events).toBeGreaterThan(2);
    expect(stream.finalOutput).toBe("Tool get_weather returned: sunny in use get_weather");
  });

  it("an agent with a zod outputType gets a final output that parses", async () => {
    const agent = new Agent({ name: "structured", instructions: "Give a forecast.", model: model(), outputType: Forecast });
    const result = await run(agent, "Paris");
    expect(Forecast.parse(result.finalOutput)).toEqual({ city: "Paris", temperature: 0, unit: "c" });
  });

  it("a tool and an outputType: the tool runs, then the output parses", async () => {
    const agent = new Agent({ name: "both", model: model(), tools: [weather], outputType: Forecast });
    const result = await run(agent, "Paris: use get_weather", { maxTurns: 4 });
    expect(result.finalOutput).toEqual({ city: "Tool get_weather returned: sunny in Paris: use get_weather", temperature: 0, unit: "c" });
  });
});
