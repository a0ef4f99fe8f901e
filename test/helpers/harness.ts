/**
 * Runs a router two ways for the same suite (as h3 does): in-process through its fetch handler,
 * and over a real node:http server on 127.0.0.1. Either way the official openai SDK is a client.
 */
import OpenAI from "openai";
import { createRouter, type ModelmuxConfig, type Router } from "@modelmux/core";
import { createLogger } from "../../core/src/logger.ts";
import { startServer, type RunningServer } from "../../core/src/server/listen.ts";
import type { RouterOptions } from "../../core/src/router.ts";

export type Transport = "fetch" | "http";
export const TRANSPORTS: readonly Transport[] = ["fetch", "http"];

export const TEST_KEY = "sk-test-modelmux-0123456789";

export interface Harness {
  transport: Transport;
  router: Router;
  /** `…/v1`, for the SDK. */
  baseURL: string;
  /** A raw request to the router; `path` starts with `/`. */
  request(path: string, init?: RequestInit): Promise<Response>;
  /** An openai SDK client with the test key and no retries. */
  openai: OpenAI;
  close(): Promise<void>;
}

/** A quiet logger; tests that read the log pass their own `write`. */
export function silentLogger() {
  return createLogger({ level: "silent" });
}

/** The smallest valid config around the given providers. */
export function testConfig(providers: ModelmuxConfig["providers"], extra: Partial<ModelmuxConfig> = {}): ModelmuxConfig {
  return { auth: { api_keys: [{ key: TEST_KEY, app: "test-app", developer: "tester" }] }, providers, ...extra };
}

export async function startHarness(config: ModelmuxConfig, transport: Transport, options: RouterOptions = {}): Promise<Harness> {
  const router = await createRouter(config, { logger: silentLogger(), ...options });
  let server: RunningServer | undefined;
  let origin = "http://modelmux.test";
  let fetchImpl: typeof fetch = (input, init) => router.fetch(new Request(input, init));
  if (transport === "http") {
    server = await startServer(router, { host: "127.0.0.1", port: 0 });
    origin = server.url;
    fetchImpl = fetch;
  }
  const baseURL = `${origin}/v1`;
  return {
    transport,
    router,
    baseURL,
    request: (path, init) => fetchImpl(`${origin}${path}`, init),
    openai: new OpenAI({ baseURL, apiKey: TEST_KEY, maxRetries: 0, fetch: fetchImpl }),
    async close() {
      if (server) await server.stop();
      else await router.close();
    },
  };
}

/** JSON POST with the test key. */
export function postJson(body: unknown, headers: Record<string, string> = {}): RequestInit {
  return {
    method: "POST",
    headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  };
}

/** Reads an SSE reply into its `data:` payloads. */
export async function readSse(response: Response): Promise<string[]> {
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((block) => block.startsWith("data: "))
    .map((block) => block.slice("data: ".length));
}
