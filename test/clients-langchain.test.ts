/**
 * LangChain's `ChatOpenAI` against the router, offline, on chat completions and with
 * `useResponsesApi: true`: a bound tool is called and its `ToolMessage` answered (the round trip an
 * agent makes), and `withStructuredOutput(zod)` (its default method, `jsonSchema`, which the echo
 * declares) parses.
 */
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Harness } from "./helpers/harness.ts";
import { ECHO_MODEL, loopbackOnly, startEchoRouter, TEST_KEY } from "./helpers/echo-clients.ts";

let h: Harness;
let guard: ReturnType<typeof loopbackOnly>;
/** The paths the clients called, to tell which API a mode used. */
const paths: string[] = [];

beforeAll(async () => {
  guard = loopbackOnly();
  h = await startEchoRouter();
});
afterAll(async () => {
  await h.close();
  guard.restore();
  expect(guard.refused).toEqual([]);
});

const weather = tool(async ({ city }) => `sunny in ${city}`, {
  name: "get_weather",
  description: "The weather in a city",
  schema: z.object({ city: z.string() }),
});

const Person = z.object({ name: z.string(), age: z.number().int().min(18), role: z.enum(["admin", "user"]) });

function chatModel(useResponsesApi: boolean): ChatOpenAI {
  const fetchRecorded: typeof fetch = (input, init) => {
    paths.push(new URL(input instanceof Request ? input.url : String(input)).pathname);
    return fetch(input, init);
  };
  return new ChatOpenAI({ model: ECHO_MODEL, apiKey: TEST_KEY, maxRetries: 0, useResponsesApi, configuration: { baseURL: h.baseURL, fetch: fetchRecorded } });
}

describe.each([
  ["chat completions", false, "/v1/chat/completions"],
  ["the Responses API", true, "/v1/responses"],
] as const)("LangChain ChatOpenAI on %s", (_mode, useResponsesApi, path) => {
  it("bindTools: the tool is called, and its ToolMessage is answered with text", async () => {
    paths.length = 0;
    const model = chatModel(useResponsesApi).bindTools([weather]);
    const messages: BaseMessage[] = [new HumanMessage("What is the weather in Paris? Use get_weather.")];
    const first = await model.invoke(messages);
    expect(first.tool_calls).toHaveLength(1);
    const call = first.tool_calls![0]!;
    expect(call).toMatchObject({ name: "get_weather", args: { city: "What is the weather in Paris? Use get_weather." } });
    const result = await weather.invoke(call);
    expect(result).toBeInstanceOf(ToolMessage);
    messages.push(first, result);
    const second = await model.invoke(messages);
    expect(second).toBeInstanceOf(AIMessage);
    expect(second.tool_calls ?? []).toEqual([]);
    expect(second.text).toBe("Tool get_weather returned: sunny in What is the weather in Paris? Use get_weather.");
    expect(paths).toEqual([path, path]);
  });

  it("withStructuredOutput(zod) parses, with its default method", async () => {
    const model = chatModel(useResponsesApi).withStructuredOutput(Person);
    expect(await model.invoke("Ada")).toEqual({ name: "Ada", age: 18, role: "admin" });
  });

  it("withStructuredOutput by function calling parses too", async () => {
    const model = chatModel(useResponsesApi).withStructuredOutput(Person, { method: "functionCalling" });
    expect(await model.invoke("Ada")).toEqual({ name: "Ada", age: 18, role: "admin" });
  });

  it("streams the reply", async () => {
    let text = "";
    for await (const chunk of await chatModel(useResponsesApi).stream("stream this, please")) text += chunk.text;
    expect(text).toBe("stream this, please");
  });
});
