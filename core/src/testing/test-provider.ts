/**
 * The provider conformance kit (docs/plugins.md, "Conformance kits"): one battery every provider
 * plugin must pass, run through the real core against the plugin's fake upstream. A plugin's test
 * file is a few lines:
 *
 * @example
 * import { testProvider } from "@modelmux/core/testing";
 * import plugin from "../src/index.ts";
 * import { startFakeAcme, acmeRequestReader } from "./fake-acme.ts";
 *
 * testProvider({ plugin, model: "acme-large", upstream: { start: startFakeAcme, reader: acmeRequestReader } });
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../logger.ts";
import type { ProviderDefinition } from "../plugin.ts";
import { retiredStreamNote } from "../plugins/provider-contract-check.ts";
import { createRouter, type Router } from "../router.ts";
import type { ChatCompletion } from "../types/chat.ts";
import { parseChunks, readSseData, streamedText } from "./sse-client.ts";
import type { ConformanceUpstream, UpstreamRequestReader } from "./types.ts";
import { embeddingCases } from "./embedding-cases.ts";
import { prefillCases } from "./prefill-cases.ts";
import { upstreamCases } from "./upstream-cases.ts";

export interface ProviderConformanceOptions {
  /** The plugin under test (its default export). */
  plugin: ProviderDefinition<never>;
  /** A bare model id the plugin serves with chat, streaming and tools. */
  model: string;
  /**
   * A bare model id with the `embeddings` capability that takes `dimensions`, for the embedding
   * cases; default `model` when it has the capability. A provider with `embeddings` must have one.
   */
  embeddingModel?: string;
  /** Plugin options, laid over the fake upstream's own (`base_url`, `api_key`). */
  options?: Record<string, unknown>;
  /**
   * The plugin's fake upstream and how to read what it received. Without one (an offline provider
   * such as echo) only the cases that need no upstream run, and the provider must be deterministic.
   */
  upstream?: { start(): Promise<ConformanceUpstream>; reader: UpstreamRequestReader };
}

const KEY = "sk-conformance-kit";
const AUTH = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };

/** The router under test and a way to call it; shared by the cases. */
export interface KitContext {
  router: Router;
  upstream: ConformanceUpstream | undefined;
  reader: UpstreamRequestReader | undefined;
  /** The public model names: `kit/<model>` (1 s timeout) and `patient/<model>` (default timeout). */
  model: string;
  patientModel: string;
  /** `kit/<embedding model>`, when the plugin has one to test. */
  embeddingModel: string | undefined;
  chat(body: Record<string, unknown>, init?: { signal?: AbortSignal }): Promise<Response>;
  embeddings(body: Record<string, unknown>): Promise<Response>;
}

async function startKit(options: ProviderConformanceOptions): Promise<KitContext> {
  const upstream = await options.upstream?.start();
  const { model, embeddingModel } = options;
  const models = embeddingModel === undefined || embeddingModel === model ? [model] : [model, embeddingModel];
  const block = { plugin: "under-test", models, ...upstream?.options, ...options.options };
  const router = await createRouter(
    {
      auth: { api_keys: [{ key: KEY }] },
      // The kit checks the plugin's one call, not the router's retries of it.
      routing: { retry: { attempts: 0 } },
      // Two entries of the same plugin: a short timeout for the stall case, the default for the rest.
      providers: { kit: { ...block, timeout: "1s" }, patient: block },
    },
    { logger: createLogger({ level: "silent" }), plugins: { "under-test": options.plugin } },
  );
  const embeds = embeddingModel ?? (router.models.resolve(`kit/${model}`).capabilities.embeddings ? model : undefined);
  return {
    router,
    upstream,
    reader: options.upstream?.reader,
    model: `kit/${model}`,
    patientModel: `patient/${model}`,
    embeddingModel: embeds === undefined ? undefined : `kit/${embeds}`,
    chat: (body, init) =>
      router.fetch(new Request("http://kit.test/v1/chat/completions", { method: "POST", headers: AUTH, body: JSON.stringify(body), signal: init?.signal })),
    embeddings: (body) => router.fetch(new Request("http://kit.test/v1/embeddings", { method: "POST", headers: AUTH, body: JSON.stringify(body) })),
  };
}

const ask = (content: string) => [{ role: "user", content }];

/** Cases every provider passes, with or without an upstream. */
function shapeCases(kit: () => KitContext): void {
  it("streams one way: chatStream, or chatStreamEvents in its place, and no chatStreamBatches", () => {
    const provider = kit().router.models.resolve(kit().model).instance;
    // The core calls `chatStreamEvents` when a provider has it, and then never its `chatStream`.
    const forms = (["chatStream", "chatStreamEvents"] as const).filter((name) => typeof provider[name] === "function");
    expect(forms, "chatStream and chatStreamEvents: the core would never call chatStream").toHaveLength(1);
    expect(retiredStreamNote(provider)).toBeUndefined();
  });

  it("answers a JSON request with a normalised chat.completion", async () => {
    const res = await kit().chat({ model: kit().model, messages: ask("Say something short") });
    expect(res.status).toBe(200);
    const body = (await res.json()) as ChatCompletion;
    expect(body).toMatchObject({ object: "chat.completion", choices: [{ index: 0, message: { role: "assistant" } }] });
    expect(typeof body.id).toBe("string");
    expect(Number.isInteger(body.created)).toBe(true);
    expect(typeof body.model).toBe("string");
    expect(["stop", "length", "tool_calls", "content_filter", "error"]).toContain(body.choices[0]!.finish_reason);
    expect(body.usage!.total_tokens).toBe(body.usage!.prompt_tokens + body.usage!.completion_tokens);
  });

  it("streams chat.completion.chunk events: role first, one id, [DONE] last, usage only when asked", async () => {
    const withUsage = await readSseData(await kit().chat({ model: kit().model, stream: true, stream_options: { include_usage: true }, messages: ask("one two three four") }));
    expect(withUsage.at(-1)).toBe("[DONE]");
    const chunks = parseChunks(withUsage);
    expect(chunks[0]!.choices[0]!.delta.role).toBe("assistant");
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks.every((c) => c.object === "chat.completion.chunk")).toBe(true);
    const usage = chunks.at(-1)!;
    expect(usage.choices).toEqual([]);
    expect(usage.usage!.total_tokens).toBe(usage.usage!.prompt_tokens + usage.usage!.completion_tokens);

    const without = parseChunks(await readSseData(await kit().chat({ model: kit().model, stream: true, messages: ask("one two three four") })));
    expect(without.some((c) => c.choices.length === 0)).toBe(false);
  });

  it("streams the same text it answers in JSON", async () => {
    kit().upstream?.next({ text: "Same words either way" });
    const json = (await (await kit().chat({ model: kit().model, messages: ask("repeat") })).json()) as ChatCompletion;
    kit().upstream?.next({ text: "Same words either way" });
    const chunks = parseChunks(await readSseData(await kit().chat({ model: kit().model, stream: true, messages: ask("repeat") })));
    expect(streamedText(chunks)).toBe(json.choices[0]!.message.content);
  });
}

/**
 * Registers the conformance battery for a provider plugin as a vitest `describe` block.
 */
export function testProvider(options: ProviderConformanceOptions): void {
  describe(`provider conformance: ${options.plugin.name}`, () => {
    let context: KitContext | undefined;
    const kit = () => context!;
    beforeAll(async () => {
      context = await startKit(options);
    });
    beforeEach(() => context?.upstream?.reset());
    afterAll(async () => {
      await context?.router.close();
      await context?.upstream?.close();
    });
    shapeCases(kit);
    prefillCases(kit);
    embeddingCases(kit, options.upstream !== undefined);
    if (options.upstream) upstreamCases(kit);
  });
}
