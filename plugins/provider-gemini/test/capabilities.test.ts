import { describe, expect, it } from "vitest";
import { geminiCapabilities, OTHER_DEFAULTS } from "../src/capabilities.ts";

const CHAT = { chat: true, streaming: true, tools: true, parallel_tool_calls: true, vision: true, json_mode: true, json_schema: true, n: true };
const OFF = { logprobs: false, audio: false, images: false, responses: false, embeddings: false, prefill: false };

describe("geminiCapabilities", () => {
  it.each(["gemini-2.5-flash", "gemini-2.5-pro", "gemini-2.5-flash-lite", "models/gemini-2.5-flash", "gemini-3-pro-preview", "gemini-flash-latest"])(
    "%s: the chat set with reasoning_effort",
    (model) => {
      expect(geminiCapabilities(model)).toEqual({ ...CHAT, ...OFF, reasoning_effort: true });
    },
  );

  it.each(["gemini-2.0-flash", "gemini-2.0-flash-001", "gemini-1.5-pro", "Gemini-1.5-Flash-8B"])("%s: the chat set without reasoning_effort", (model) => {
    expect(geminiCapabilities(model)).toEqual({ ...CHAT, ...OFF, reasoning_effort: false });
  });

  it.each(["gemini-2.5-flash-image", "gemini-2.0-flash-preview-image-generation", "gemini-3-pro-image-preview", "imagen-4.0-generate-001", "imagen-3.0-generate-002", "nano-banana-pro-preview"])("%s: images, no chat", (model) => {
    expect(geminiCapabilities(model)).toEqual({ chat: false, streaming: false, images: true });
  });

  it("gives embedding models embeddings and no chat, and anything unknown plain chat", () => {
    for (const model of ["gemini-embedding-001", "text-embedding-004", "models/gemini-embedding-exp-03-07"]) {
      expect(geminiCapabilities(model)).toEqual({ chat: false, streaming: false, embeddings: true });
    }
    expect(geminiCapabilities("gemma-3-27b-it")).toEqual(OTHER_DEFAULTS);
  });

  it("returns a copy each time", () => {
    const first = geminiCapabilities("gemini-2.5-flash");
    first.tools = false;
    expect(geminiCapabilities("gemini-2.5-flash").tools).toBe(true);
  });
});
