import { describe, expect, it } from "vitest";
import type { ChatRequest } from "@modelmux/core";
import { toOpenAIRequest } from "../src/request.ts";

describe("toOpenAIRequest", () => {
  const messages: ChatRequest["messages"] = [
    { role: "user", content: "Weather?" },
    { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{}" } }] },
    { role: "tool", content: "sunny", tool_call_id: "call_1" },
  ];

  it("sends the bare model id given in the call", () => {
    expect(toOpenAIRequest({ model: "openai/gpt-4o-mini", messages }, "gpt-4o-mini").model).toBe("gpt-4o-mini");
  });

  it("passes every set field through unchanged", () => {
    const request: ChatRequest = {
      model: "gpt-4o",
      messages,
      temperature: 0.2,
      tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }],
      tool_choice: "auto",
      response_format: { type: "json_object" },
      stream: true,
      stream_options: { include_usage: true },
      n: 2,
      seed: 7,
      stop: ["\n"],
    };
    expect(toOpenAIRequest(request, "gpt-4o")).toEqual(request);
  });

  it("drops top-level nulls but keeps nested ones", () => {
    const body = toOpenAIRequest({ model: "m", messages, temperature: null, tools: null, user: undefined }, "m");
    expect(Object.keys(body).sort()).toEqual(["messages", "model"]);
    expect(body.messages[1]?.content).toBeNull();
  });

  it("does not modify its input", () => {
    const request: ChatRequest = { model: "openai/x", messages, top_p: null };
    toOpenAIRequest(request, "x");
    expect(request).toEqual({ model: "openai/x", messages, top_p: null });
  });
});
