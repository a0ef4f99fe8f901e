import { describe, expect, it } from "vitest";
import { CAPABILITY_NAMES } from "@modelmux/core";
import { anthropicCapabilities } from "../src/capabilities.ts";

const ON = ["chat", "streaming", "tools", "parallel_tool_calls", "vision"];

describe("anthropicCapabilities", () => {
  it.each([
    "claude-3-7-sonnet-20250219",
    "claude-3-7-sonnet-latest",
    "claude-sonnet-4-5",
    "claude-sonnet-4-5-20250929",
    "claude-sonnet-4-20250514",
    "claude-sonnet-4-0",
    "claude-opus-4-0",
    "claude-opus-4-20250514",
    "claude-opus-4-1",
    "claude-opus-4-5-20251101",
    "claude-haiku-4-5-20251001",
  ])("%s: the Claude set plus reasoning_effort and prefill", (model) => {
    const caps = anthropicCapabilities(model);
    expect(Object.keys(caps).sort()).toEqual([...CAPABILITY_NAMES].sort());
    for (const name of CAPABILITY_NAMES) expect(caps[name], name).toBe(ON.includes(name) || name === "reasoning_effort" || name === "prefill");
  });

  it.each(["claude-sonnet-4-6", "claude-opus-4-6", "claude-opus-4-7", "claude-opus-4-8-20260520"])("%s: reasoning_effort without prefill (Claude 4.6 and later refuse it)", (model) => {
    const caps = anthropicCapabilities(model);
    for (const name of CAPABILITY_NAMES) expect(caps[name], name).toBe(ON.includes(name) || name === "reasoning_effort");
  });

  it.each(["claude-3-5-sonnet-20241022", "claude-3-5-haiku-latest", "claude-3-opus-20240229", "claude-3-haiku-20240307"])("%s: the Claude set with prefill, without reasoning_effort", (model) => {
    const caps = anthropicCapabilities(model);
    for (const name of CAPABILITY_NAMES) expect(caps[name], name).toBe(ON.includes(name) || name === "prefill");
  });

  it.each(["claude-sonnet-5", "claude-opus-5-5", "claude-haiku-5-5", "claude-fable-5-1", "some-proxy-model"])("%s (a name the plugin does not know): the Claude set, prefill off", (model) => {
    const caps = anthropicCapabilities(model);
    for (const name of CAPABILITY_NAMES) expect(caps[name], name).toBe(ON.includes(name));
  });

  it("gives Claude 2 and Instant plain chat only, with prefill", () => {
    expect(anthropicCapabilities("claude-2.1")).toMatchObject({ chat: true, streaming: true, tools: false, vision: false, reasoning_effort: false, prefill: true });
    expect(anthropicCapabilities("claude-instant-1.2")).toMatchObject({ tools: false, prefill: true });
  });

  it("matches case-insensitively and returns a fresh object each time", () => {
    expect(anthropicCapabilities("Claude-Sonnet-4-5").reasoning_effort).toBe(true);
    const a = anthropicCapabilities("claude-sonnet-4-5");
    a.tools = false;
    expect(anthropicCapabilities("claude-sonnet-4-5").tools).toBe(true);
  });
});
