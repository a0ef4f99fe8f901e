/**
 * The translation files alone, for what the conformance kit cannot see: how a tool conversation is
 * laid out for Parrot, what Parrot cannot do, and the stream's own failure modes.
 */
import { replyBody, type ChatRequest } from "@modelmux/core";
import { describe, expect, it } from "vitest";
import { toParrotRequest } from "../src/request.ts";
import { toProviderError } from "../src/response.ts";
import { readParrotStream } from "../src/stream.ts";

const weather = { type: "function" as const, function: { name: "get_weather", parameters: { type: "object" } } };
const toolTurn: ChatRequest["messages"] = [
  { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
  { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
  { role: "tool", tool_call_id: "call_1", content: "sunny" },
];

describe("toParrotRequest", () => {
  it("turns a tool call into a bot turn with its input, and its result into a tool turn naming the tool", () => {
    expect(toParrotRequest({ model: "x", messages: toolTurn, tools: [weather], max_tokens: 5 }, "parrot-1")).toEqual({
      model: "parrot-1",
      prompt: [
        { speaker: "human", text: "Weather in Paris?" },
        { speaker: "bot", text: "", call: { tool: "get_weather", input: { city: "Paris" } } },
        { speaker: "tool", tool: "get_weather", text: "sunny" },
      ],
      tools: [{ name: "get_weather", schema: { type: "object" } }],
      max_new_tokens: 5,
      stream: false,
    });
  });

  it("refuses what Parrot cannot do instead of ignoring it", () => {
    expect(() => toParrotRequest({ model: "x", messages: toolTurn, tools: [weather], tool_choice: "required" }, "p")).toThrow(/cannot be forced/);
    expect(() => toParrotRequest({ model: "x", messages: [toolTurn[2]!] }, "p")).toThrow(/messages\[0\]\.tool_call_id/);
  });
});

describe("toProviderError", () => {
  it("keeps a 4xx with Parrot's kind as the code, and makes a 5xx or an HTML page a 502", () => {
    const headers = {};
    expect(toProviderError("parrot", { status: 404, text: '{"problem":{"kind":"no_model","detail":"no such model"}}', headers })).toMatchObject({ status: 404, code: "no_model", message: "parrot: no such model" });
    expect(toProviderError("parrot", { status: 503, text: "<html><body>Bad gateway</body></html>", headers })).toMatchObject({ status: 502, code: "upstream_error" });
  });
});

describe("readParrotStream", () => {
  const read = async (sse: string) => {
    const chunks = [];
    for await (const chunk of readParrotStream(replyBody([sse]), { provider: "parrot", model: "parrot-1", timeoutMs: 1000 })) chunks.push(chunk);
    return chunks;
  };

  it("maps a problem event, and a stream that ends without 'end', to a 502", async () => {
    await expect(read('event: token\ndata: {"text":"a"}\n\nevent: problem\ndata: {"kind":"internal","detail":"melted"}\n\n')).rejects.toMatchObject({ status: 502, message: "parrot: melted" });
    await expect(read('event: token\ndata: {"text":"a"}\n\n')).rejects.toMatchObject({ status: 502, message: expect.stringContaining("without its 'end'") });
  });

  it("sends no role chunk before Parrot said anything, so an early failure is still an error reply", async () => {
    const stream = readParrotStream(replyBody([""]), { provider: "parrot", model: "parrot-1", timeoutMs: 1000 });
    await expect(stream.next()).rejects.toMatchObject({ status: 502 });
  });
});
