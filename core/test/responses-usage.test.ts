import { describe, expect, it } from "vitest";
import { usageOfEventData, usageOfResponseText } from "../src/responses/usage.ts";

const usage = { input_tokens: 24, input_tokens_details: { cached_tokens: 0 }, output_tokens: 20, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 44 };
const counted = { prompt_tokens: 24, completion_tokens: 20, total_tokens: 44 };
const tool = { type: "function", name: "f", parameters: { type: "object", properties: { usage: { type: "string" }, note: { type: "string", description: 'has "usage":{ in it' } } } };

describe("usageOfResponseText", () => {
  it.each([
    ["OpenAI's key order", { id: "resp_1", object: "response", output: [], tools: [tool], usage, user: null, metadata: { usage: "x" } }],
    ["usage first, a tool with a property named usage after it", { usage, id: "resp_1", tools: [tool] }],
    ["an output text that quotes a usage object", { id: "r", output: [{ type: "message", content: [{ type: "output_text", text: '{"usage":{"input_tokens":1,"output_tokens":1}}' }] }], usage }],
  ])("reads the top-level usage: %s", (_name, response) => {
    expect(usageOfResponseText(JSON.stringify(response))).toEqual(counted);
    expect(usageOfResponseText(JSON.stringify(response, null, 2))).toEqual(counted);
  });

  it("reads the Response's own usage when an object nested after it has usage-like fields", () => {
    const nested = { input_tokens: 1, output_tokens: 1, total_tokens: 2 };
    const later = [
      { id: "r", usage, output: [{ type: "message", usage: nested, content: [] }] },
      { id: "r", usage, extra: { usage: nested } },
      { id: "r", usage, extra: [[{ usage: nested }]], user: "u" },
    ];
    for (const response of later) expect(usageOfResponseText(JSON.stringify(response))).toEqual(counted);
  });

  it("gives nothing for a reply without usage, or one that is not JSON", () => {
    expect(usageOfResponseText(JSON.stringify({ id: "r", usage: null }))).toBeUndefined();
    expect(usageOfResponseText("<html>bad gateway</html>")).toBeUndefined();
    expect(usageOfResponseText('{"usage":{"input_tokens":1')).toBeUndefined();
  });
});

describe("usageOfEventData", () => {
  it("reads a terminal event's usage and ignores other events", () => {
    for (const type of ["response.completed", "response.incomplete", "response.failed"]) {
      expect(usageOfEventData(JSON.stringify({ type, sequence_number: 9, response: { id: "r", tools: [tool], usage, metadata: {} } }))).toEqual(counted);
      // Another key order still counts: the whole event is parsed then.
      expect(usageOfEventData(JSON.stringify({ sequence_number: 9, response: { usage }, type }))).toEqual(counted);
    }
    expect(usageOfEventData(JSON.stringify({ type: "response.output_text.delta", delta: "x", usage }))).toBeUndefined();
    // Only the usage of the event's `response` counts, wherever another one sits.
    const nested = { input_tokens: 1, output_tokens: 1 };
    expect(usageOfEventData(JSON.stringify({ type: "response.completed", response: { usage, output: [{ usage: nested }] }, sequence_number: 9 }))).toEqual(counted);
    expect(usageOfEventData(JSON.stringify({ type: "response.completed", response: { id: "r" }, usage: nested }))).toBeUndefined();
    expect(usageOfEventData(JSON.stringify({ type: "response.completed", response: { usage, metadata: { a: "b" } }, sequence_number: 9 }))).toEqual(counted);
    expect(usageOfEventData("not json")).toBeUndefined();
  });
});
