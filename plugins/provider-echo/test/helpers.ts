/** Sets up the echo provider the way the core does, with a silent logger and no network. */
import { createConsola, LogLevels } from "consola";
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionWithoutUsage, ChatRequest, ChatStreamItem, HttpClient, Provider, ProviderCall } from "@modelmux/core";
import echo, { type EchoOptions } from "../src/index.ts";

/** An HTTP client that fails the test if the echo provider ever touches it. */
export const offlineHttp: HttpClient & { calls: number } = {
  calls: 0,
  async request() {
    offlineHttp.calls++;
    throw new Error("provider-echo must not use the network");
  },
  async close() {},
};

export async function setupEcho(options: EchoOptions = {}): Promise<Provider> {
  return echo.setup(options, { name: "echo", logger: createConsola({ level: LogLevels.silent }), http: offlineHttp });
}

export function call(signal: AbortSignal = new AbortController().signal): ProviderCall {
  return { model: "echo-1", signal, timeoutMs: 600_000, requestId: "req-test" };
}

export function request(fields: Partial<ChatRequest> = {}): ChatRequest {
  return { model: "echo-1", messages: [{ role: "user", content: "Hello there, echo model!" }], ...fields };
}

export async function chat(provider: Provider, fields: Partial<ChatRequest> = {}): Promise<ChatCompletion | ChatCompletionWithoutUsage> {
  return provider.chat(request(fields), call());
}

/** Collects a stream the way the core would receive it, with the stream flags the core sets. */
export async function collect(provider: Provider, fields: Partial<ChatRequest> = {}, signal?: AbortSignal): Promise<ChatCompletionChunk[]> {
  const items: ChatStreamItem[] = [];
  const stream = await provider.chatStream!(request({ ...fields, stream: true, stream_options: { include_usage: true } }), call(signal));
  // `chatStream` may yield an array of items per read; echo yields them one at a time.
  for await (const read of stream) items.push(...((Array.isArray(read) ? read : [read]) as ChatStreamItem[]));
  return items.map((item) => (typeof item === "string" ? (JSON.parse(item) as ChatCompletionChunk) : item));
}
