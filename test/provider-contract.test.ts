/**
 * The provider contract's one way to stream (docs/plugins.md, "Provider plugins"), checked when a
 * plugin loads and followed on the request path: `chatStream`, which may yield an item or a batch
 * of items per read, or `chatStreamEvents` in its place; a provider with neither is refused at
 * start, and one that still has the retired `chatStreamBatches` loads with a warning and streams
 * through `chatStream`. The built-in providers' calls make no `AbortSignal` on the way: the core's
 * helpers listen to its cheap hook instead.
 */
import { describe, expect, it, vi } from "vitest";
import { createLogger, createRouter, defineProvider, replyBody, type ChatCompletionChunk, type ChatStreamItem, type Provider, type Router } from "@modelmux/core";
import { readSseData } from "@modelmux/core/testing";
import { ConfigError } from "../core/src/config/config-error.ts";
import { RequestAbort } from "../core/src/server/request-abort.ts";
import { CallAbort } from "../core/src/upstream/call-abort.ts";
import { startFakeAnthropic } from "./fixtures/fake-anthropic.ts";
import { startFakeGemini } from "./fixtures/fake-gemini.ts";
import { startFakeOpenAIConformance } from "./fixtures/fake-openai.ts";
import { postJson, silentLogger, testConfig } from "./helpers/harness.ts";

const chunk = (content: string): ChatCompletionChunk => ({ id: "c-1", object: "chat.completion.chunk", created: 1, model: "m-1", choices: [{ index: 0, delta: { content }, finish_reason: null }] });
const ROLE: ChatCompletionChunk = { id: "c-1", object: "chat.completion.chunk", created: 1, model: "m-1", choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] };
const FINISH: ChatCompletionChunk = { id: "c-1", object: "chat.completion.chunk", created: 1, model: "m-1", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] };
const USAGE: ChatCompletionChunk = { id: "c-1", object: "chat.completion.chunk", created: 1, model: "m-1", choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } };

const notCalled = async (): Promise<never> => {
  throw new Error("not called");
};

/** A provider plugin whose `setup` returns `members` beside `capabilities` and `chat`; `closed` counts its `close` calls. */
function pluginWith(members: Record<string, unknown>, base: Partial<Provider> = { capabilities: () => ({ chat: true }), chat: notCalled }) {
  const state = { closed: 0 };
  const plugin = defineProvider({
    name: "acme",
    optionsSchema: { type: "object" },
    setup: () => ({ ...base, ...members, close: () => void state.closed++ }) as unknown as Provider,
  });
  return { plugin, state };
}

async function start(plugin: ReturnType<typeof pluginWith>["plugin"], logger = silentLogger()): Promise<Router> {
  return createRouter(testConfig({ x: { plugin: "acme", models: ["m-1"] } }), { env: {}, logger, plugins: { acme: plugin } });
}

async function startError(plugin: ReturnType<typeof pluginWith>["plugin"]): Promise<string> {
  const error = await start(plugin).then(
    async (router) => (await router.close(), undefined),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return (error as ConfigError).message;
}

/** The content a streamed request to `x/m-1` gets, and its `[DONE]`. */
async function streamed(router: Router): Promise<string[]> {
  const res = await router.fetch(new Request("http://x/v1/chat/completions", postJson({ model: "x/m-1", stream: true, messages: [{ role: "user", content: "hi" }] })));
  expect(res.status).toBe(200);
  return (await readSseData(res)).map((data) => (data === "[DONE]" ? data : ((JSON.parse(data) as ChatCompletionChunk).choices[0]?.delta.content ?? "")));
}

describe("a provider's way to stream, checked at start", () => {
  it("refuses a provider with neither chatStream nor chatStreamEvents, naming the block, the plugin and both forms, and closes it", async () => {
    const { plugin, state } = pluginWith({});
    const message = await startError(plugin);
    expect(message).toMatch(/^providers\.x: plugin 'acme' cannot be used: its provider has no way to stream/);
    expect(message).toContain("chatStream(request, call)");
    expect(message).toContain("chatStreamEvents(request, call)");
    expect(state.closed).toBe(1);
  });

  it("refuses a provider without chat or capabilities, naming what is missing", async () => {
    expect(await startError(pluginWith({ chatStream: notCalled }, { capabilities: () => ({}) }).plugin)).toBe("providers.x: plugin 'acme' cannot be used: its provider has no chat method");
    expect(await startError(pluginWith({ chatStream: notCalled }, { chat: notCalled }).plugin)).toBe("providers.x: plugin 'acme' cannot be used: its provider has no capabilities method");
  });

  it("refuses a setup that returns no object", async () => {
    const plugin = defineProvider({ name: "acme", optionsSchema: { type: "object" }, setup: () => undefined as unknown as Provider });
    expect(await startError(plugin)).toBe("providers.x: plugin 'acme' cannot be used: setup returned undefined, not a provider");
  });
});

describe("chatStream", () => {
  it("may yield single items and batches (one per upstream read) in one stream: the client gets every chunk, in order", async () => {
    async function* mixed(): AsyncGenerator<ChatStreamItem | readonly ChatStreamItem[]> {
      yield ROLE;
      yield [chunk("one "), JSON.stringify(chunk("two "))];
      yield chunk("three");
      yield [FINISH, USAGE];
    }
    const router = await start(pluginWith({ chatStream: async () => mixed() }).plugin);
    try {
      expect(await streamed(router)).toEqual(["", "one ", "two ", "three", "", "[DONE]"]);
    } finally {
      await router.close();
    }
  });

  it("is the only stream of a provider that still has the retired chatStreamBatches, which loads with a warning naming it", async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: "warn", write: (text) => lines.push(text) });
    async function* singles(): AsyncGenerator<ChatStreamItem> {
      yield* [ROLE, chunk("old"), FINISH, USAGE];
    }
    const router = await start(pluginWith({ chatStream: async () => singles(), chatStreamBatches: notCalled }).plugin, logger);
    try {
      expect(await streamed(router)).toEqual(["", "old", "", "[DONE]"]);
      logger.flush();
      expect(lines.join("")).toContain("providers.x: plugin 'acme': its provider's chatStreamBatches is no longer called");
    } finally {
      await router.close();
    }
  });
});

describe("chatStreamEvents", () => {
  it("streams a provider that has it and no chatStream: the core relays its body", async () => {
    const sse = [ROLE, chunk("relayed"), FINISH, USAGE].map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n";
    const router = await start(pluginWith({ chatStreamEvents: async () => ({ body: replyBody([Buffer.from(sse)]), errorOf: () => undefined }) }).plugin);
    try {
      expect(await streamed(router)).toEqual(["", "relayed", "", "[DONE]"]);
    } finally {
      await router.close();
    }
  });
});

describe("the one abort on the core's own path", () => {
  it.each([
    ["provider-openai", "gpt-4o-mini", startFakeOpenAIConformance],
    ["provider-anthropic", "claude-sonnet-4-5", startFakeAnthropic],
    ["provider-gemini", "gemini-2.5-flash", startFakeGemini],
  ] as const)("%s answers JSON and streams without making the call's signal", async (plugin, model, startFake) => {
    const fake = await startFake();
    const router = await createRouter(testConfig({ x: { plugin, models: [model], ...fake.options } }), { env: {}, logger: silentLogger() });
    const callSignals = vi.spyOn(CallAbort.prototype, "signal", "get");
    const requestSignals = vi.spyOn(RequestAbort.prototype, "signal", "get");
    try {
      const ask = (stream: boolean) => router.fetch(new Request("http://x/v1/chat/completions", postJson({ model: `x/${model}`, stream, messages: [{ role: "user", content: "hi" }] })));
      expect((await ask(false)).status).toBe(200);
      const streamedRes = await ask(true);
      expect(streamedRes.status).toBe(200);
      expect((await readSseData(streamedRes)).at(-1)).toBe("[DONE]");
      expect(callSignals).not.toHaveBeenCalled();
      expect(requestSignals).not.toHaveBeenCalled();
    } finally {
      callSignals.mockRestore();
      requestSignals.mockRestore();
      await router.close();
      await fake.close();
    }
  });
});
