/**
 * The shared setup of the provider plugins' unit tests (`plugins/provider-<name>/test/provider.test.ts`):
 * the plugin's `setup(...)` result, made the way the core makes it — over the core's real HTTP
 * client, with a silent logger — and pointed at the plugin's fake upstream, which is started once,
 * reset before each test and closed (with the HTTP client) after the file; plus the builders and
 * readers those tests share.
 *
 * Call `useProviderCalls` at the top level of a test file: it registers `beforeAll`, `beforeEach`
 * and `afterAll` hooks there.
 *
 * @example
 * const t = useProviderCalls({
 *   plugin,
 *   model: "gpt-4o-mini",
 *   start: () => startFakeOpenAI({ apiKey: KEY }),
 *   options: (fake) => ({ base_url: fake.url, api_key: KEY }),
 * });
 *
 * it("maps 429", async () => {
 *   t.fake.setNext({ error: { status: 429 } });
 *   const error = await rejection((await t.provider()).chat(t.ask("x"), t.call()));
 *   expect(error.status).toBe(429);
 * });
 */
import { afterAll, beforeAll, beforeEach, expect } from "vitest";
import {
  createHttpClient,
  createLogger,
  ModelmuxError,
  type ChatCompletionChunk,
  type ChatRequest,
  type ChatStreamItem,
  type HttpClient,
  type Logger,
  type PluginContext,
  type Provider,
  type ProviderCall,
  type ProviderDefinition,
} from "@modelmux/core";
import { RequestAbort } from "../../core/src/server/request-abort.ts";
import type { Exchange } from "../../core/src/server/exchange.ts";
import { providerCall } from "../../core/src/upstream/provider-call.ts";

/** What the helper needs of a fake upstream. */
export interface ResettableFake {
  reset(): void;
  close(): Promise<void>;
}

export interface ProviderCallsConfig<Fake extends ResettableFake, Options> {
  /** The plugin under test (its default export). */
  plugin: ProviderDefinition<Options>;
  /** The bare model id that `call()`, `ask()` and `askStream()` use. */
  model: string;
  /** Starts the fake upstream; run once, before the file's tests. */
  start(): Promise<Fake>;
  /** The plugin options that point it at the fake (`base_url`, `api_key`…). */
  options(fake: Fake): Options;
}

export interface ProviderCalls<Fake, Options> {
  /** The running fake upstream (inside tests and hooks: it starts in `beforeAll`). */
  readonly fake: Fake;
  /** The core's real keep-alive HTTP client, closed after the file. */
  readonly http: HttpClient;
  /** A silent logger (the core's). */
  readonly logger: Logger;
  /**
   * The plugin's `setup(...)` result: the options laid over the ones that reach the fake, and a
   * context named after the plugin (`ctx` overrides its `name`, `logger` or `http`).
   */
  provider(options?: Partial<Options>, ctx?: Partial<PluginContext>): Promise<Provider>;
  /** A call for the model, with a signal that never fires, a 5 s timeout and request id `req_test_1`. */
  call(overrides?: Partial<ProviderCall>): ProviderCall;
  /**
   * The call as the core makes it (`core/src/provider-call.ts`): the same, with the core's abort
   * hook, which `postUpstream` listens to instead of the signal, and which never fires here.
   */
  coreCall(model?: string): ProviderCall;
  /** A non-streamed request for the model with one user message. */
  ask(content: string, extra?: Partial<ChatRequest>): ChatRequest;
  /** A streamed request for the model with one user message, asking for usage (as the core always does). */
  askStream(content: string, extra?: Partial<ChatRequest>): ChatRequest;
}

/** Registers the hooks that run the fake and the HTTP client for this file, and returns the builders. */
export function useProviderCalls<Fake extends ResettableFake, Options>(config: ProviderCallsConfig<Fake, Options>): ProviderCalls<Fake, Options> {
  const http = createHttpClient();
  const logger = createLogger({ level: "silent" });
  let fake: Fake | undefined;
  beforeAll(async () => {
    fake = await config.start();
  });
  beforeEach(() => fake?.reset());
  afterAll(async () => {
    await http.close();
    await fake?.close();
  });

  const running = (): Fake => {
    if (!fake) throw new Error("The fake upstream runs only inside tests and hooks.");
    return fake;
  };
  const ask = (content: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({ model: config.model, messages: [{ role: "user", content }], stream: false, ...extra });
  return {
    get fake() {
      return running();
    },
    http,
    logger,
    provider: async (options = {}, ctx = {}) => config.plugin.setup({ ...config.options(running()), ...options }, { name: config.plugin.name, logger, http, ...ctx }),
    call: (overrides = {}) => ({ model: config.model, signal: new AbortController().signal, timeoutMs: 5_000, requestId: "req_test_1", ...overrides }),
    coreCall: (model = config.model) => providerCall({ abort: new RequestAbort(), requestId: "req_test_1" } as unknown as Exchange, model, 5_000),
    ask,
    askStream: (content, extra = {}) => ask(content, { stream: true, stream_options: { include_usage: true }, ...extra }),
  };
}

/** A function tool with one `city` parameter. */
export const weatherTool = { type: "function" as const, function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } };

/** Resolves with what the promise rejected with; fails the test if it resolved or rejected with anything but a `ModelmuxError`. */
export async function rejection(promise: Promise<unknown>): Promise<ModelmuxError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ModelmuxError);
  return error as ModelmuxError;
}

/** The stream's items one at a time: a provider's `chatStream` may yield a batch (an array) per upstream read. */
export async function* itemsOf<Item extends ChatStreamItem>(stream: AsyncIterable<Item | readonly Item[]>): AsyncGenerator<Item> {
  for await (const read of stream) {
    if (Array.isArray(read)) yield* read as readonly Item[];
    else yield read as Item;
  }
}

/**
 * Reads a provider's stream to its end. Every item must be of `kind`: a raw JSON string
 * (`"string"`, a pass-through provider) or a chunk object (`"object"`, a translating one).
 */
export async function collect(items: AsyncIterable<ChatStreamItem | readonly ChatStreamItem[]>, kind: "string"): Promise<string[]>;
export async function collect(items: AsyncIterable<ChatStreamItem | readonly ChatStreamItem[]>, kind: "object"): Promise<ChatCompletionChunk[]>;
export async function collect(items: AsyncIterable<ChatStreamItem | readonly ChatStreamItem[]>, kind: "string" | "object"): Promise<ChatStreamItem[]> {
  const out: ChatStreamItem[] = [];
  for await (const item of itemsOf(items)) {
    expect(typeof item).toBe(kind);
    out.push(item);
  }
  return out;
}

/**
 * Reads a stream that must fail (while it is made, or mid-way): the items it yielded first, and
 * the `ModelmuxError` it threw (anything else fails the test, as does an end without error).
 */
export async function streamFailure(stream: Promise<AsyncIterable<ChatStreamItem | readonly ChatStreamItem[]>>): Promise<{ seen: ChatStreamItem[]; error: ModelmuxError }> {
  const seen: ChatStreamItem[] = [];
  const error = await rejection(
    (async () => {
      for await (const item of itemsOf(await stream)) seen.push(item);
    })(),
  );
  return { seen, error };
}
