/**
 * What the client suites (`test/clients-*.test.ts`) share: a router on 127.0.0.1 with the echo
 * provider answering chat and the Responses API (`responses: { provider: echo }`, as the README
 * configures it), and a process whose `fetch` refuses every address but loopback, so a client that
 * tries to phone home (tracing, telemetry, a default base URL) fails its test instead of going out.
 */
import { vi } from "vitest";
import { startHarness, testConfig, TEST_KEY, type Harness } from "./harness.ts";

export { TEST_KEY };

/** The echo model, as clients name it. */
export const ECHO_MODEL = "echo/echo-1";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * Replaces the global `fetch` with one that refuses any host but loopback, and turns off the
 * clients' own reporting (the Agents SDK's tracing export, LangSmith). Returns the URLs refused.
 * Call it before making a client: some keep the `fetch` they find when they are made.
 */
export function loopbackOnly(): { refused: string[]; restore(): void } {
  const refused: string[] = [];
  const original = globalThis.fetch;
  vi.stubEnv("OPENAI_AGENTS_DISABLE_TRACING", "1");
  vi.stubEnv("LANGSMITH_TRACING", "false");
  vi.stubEnv("LANGCHAIN_TRACING_V2", "false");
  vi.stubEnv("OPENAI_API_KEY", TEST_KEY);
  vi.stubGlobal("fetch", (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (!LOOPBACK.has(url.hostname)) {
      refused.push(url.href);
      return Promise.reject(new Error(`test: no network beyond 127.0.0.1 (${url.href})`));
    }
    return original(input, init);
  });
  return {
    refused,
    restore() {
      vi.unstubAllGlobals();
      vi.unstubAllEnvs();
    },
  };
}

/** A router on a real node:http server on 127.0.0.1, serving the echo model for chat and responses. */
export function startEchoRouter(): Promise<Harness> {
  return startHarness(testConfig({ echo: { plugin: "provider-echo", models: ["echo-1"] } }, { responses: { provider: "echo" } }), "http");
}
