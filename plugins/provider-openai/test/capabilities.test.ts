import { describe, expect, it } from "vitest";
import { COMPATIBLE_DEFAULTS, openaiCapabilities } from "../src/capabilities.ts";

const CHAT_FEATURES = ["tools", "parallel_tool_calls", "vision", "json_mode", "json_schema", "logprobs", "n", "streaming"] as const;

describe("openaiCapabilities", () => {
  it.each(["gpt-4o", "gpt-4o-mini", "gpt-4o-2024-08-06", "gpt-4.1", "gpt-4.1-nano", "gpt-5", "gpt-5-mini"])("%s has the chat features", (model) => {
    const caps = openaiCapabilities(model);
    for (const feature of CHAT_FEATURES) expect(caps[feature], feature).toBe(true);
    expect(caps.chat).toBe(true);
  });

  it.each(["gpt-5", "gpt-5-nano", "o1", "o3-mini", "o4-mini-2025-04-16"])("%s has reasoning_effort", (model) => {
    expect(openaiCapabilities(model).reasoning_effort).toBe(true);
  });

  it.each(["gpt-4o", "gpt-4.1-mini", "gpt-3.5-turbo"])("%s has no reasoning_effort", (model) => {
    expect(openaiCapabilities(model).reasoning_effort).toBeFalsy();
  });

  it.each(["gpt-image-1", "dall-e-3"])("%s makes images and does not chat", (model) => {
    expect(openaiCapabilities(model)).toMatchObject({ images: true, chat: false });
  });

  it.each(["text-embedding-3-small", "text-embedding-3-large", "text-embedding-ada-002", "nomic-embed-text", "mxbai-embed-large:335m", "Qwen/Qwen3-Embedding-8B"])(
    "%s embeds and does not chat",
    (model) => {
      expect(openaiCapabilities(model)).toEqual({ chat: false, streaming: false, embeddings: true });
    },
  );

  it.each(["gpt-4o-mini", "o3-mini", "llama3.1:8b"])("%s does not embed", (model) => {
    expect(openaiCapabilities(model).embeddings).toBeFalsy();
  });

  it("gives the audio preview audio, and plain gpt-4o none", () => {
    expect(openaiCapabilities("gpt-4o-audio-preview").audio).toBe(true);
    expect(openaiCapabilities("gpt-4o-mini-audio-preview-2024-12-17").audio).toBe(true);
    expect(openaiCapabilities("gpt-4o").audio).toBeFalsy();
  });

  it.each(["llama3.1:8b", "mixtral-8x7b-32768", "deepseek-chat"])("unknown model %s gets the compatible defaults", (model) => {
    expect(openaiCapabilities(model)).toEqual({ chat: true, streaming: true, tools: true, json_mode: true, json_schema: true, responses: true });
    expect(openaiCapabilities(model)).toEqual(COMPATIBLE_DEFAULTS);
  });

  it("hands out copies, so a caller cannot change the defaults", () => {
    openaiCapabilities("llama3")!.vision = true;
    expect(openaiCapabilities("llama3").vision).toBeUndefined();
  });
});
