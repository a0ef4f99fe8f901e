/** What commits a stream to the client: the first chunk with content, however the upstream spaces its JSON. */
import { describe, expect, it } from "vitest";
import { hasContent, untilContent } from "../src/chat/first-content.ts";

const frame = (delta: string, finish = "null") => `data: {"choices":[{"index":0,"delta":${delta},"finish_reason":${finish}}]}\n\n`;

async function* frames(...items: string[]): AsyncGenerator<string> {
  yield* items;
}

describe("hasContent", () => {
  it("is false for a role-only chunk or an empty text", () => {
    expect(hasContent(frame('{"role":"assistant"}'))).toBe(false);
    expect(hasContent(frame('{"role":"assistant","content":""}'))).toBe(false);
    expect(hasContent(frame('{"role": "assistant", "content": ""}'))).toBe(false);
  });

  it("is true for text, a tool call or a finish reason, compact or spaced (Python's json.dumps)", () => {
    expect(hasContent(frame('{"content":"Hi"}'))).toBe(true);
    expect(hasContent(frame('{"content": "Hi"}'))).toBe(true);
    expect(hasContent(frame('{"tool_calls": [{"index": 0}]}'))).toBe(true);
    expect(hasContent(frame("{}", '"stop"'))).toBe(true);
    expect(hasContent('data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}\n\n')).toBe(true);
  });
});

describe("untilContent", () => {
  it("holds the frames before the first content, then gives them all in order", async () => {
    const all = [frame('{"role":"assistant","content":""}'), frame('{"content":"Hi"}'), frame("{}", '"stop"')];
    const it = await untilContent(frames(...all), () => undefined);
    const seen: string[] = [];
    for (let r = await it.next(); !r.done; r = await it.next()) seen.push(r.value);
    expect(seen).toEqual(all);
  });

  it("throws the failure behind an error event that comes before any content, and sends nothing", async () => {
    let failure: unknown;
    const source = (async function* () {
      yield frame('{"role":"assistant"}');
      failure = new Error("upstream failed");
      yield 'data: {"error":{"message":"upstream failed"}}\n\n';
    })();
    await expect(untilContent(source, () => failure)).rejects.toThrow("upstream failed");
  });
});
