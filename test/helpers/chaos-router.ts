/**
 * The shared rig of the router's chaos suite (`chaos-routing-*.test.ts`, README "Routing and
 * resilience"): two chaos upstreams (`chaos-upstream.ts`), `primary` and `backup`, and a router on a
 * real port in front of them: `primary/gpt-4o` (provider-openai on the primary) falls back to
 * `backup/gpt-4o` (provider-openai on the backup); `claude/claude-chaos-1` (provider-anthropic on
 * the backup) is there for the tests that want the other wire format. The routing settings are
 * small (backoff 20 ms, first_token and idle 500 ms, cooldown 1 s) so a file runs in seconds.
 *
 * Each test starts its own router (`start`), so circuit state never leaks from one to the next;
 * the upstreams are reset before each test.
 *
 * @example
 * const rig = useChaosRouter();
 * it("retries", async () => {
 *   const h = await rig.start();
 *   rig.primary.script(CHAOS_ERRORS.serverError);
 *   const { completion, headers } = await chat(h);
 * });
 */
import { createParser } from "eventsource-parser";
import OpenAI from "openai";
import type { ChatCompletion, ChatCompletionChunk } from "openai/resources/chat/completions";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import type { ModelmuxConfig, RouterOptions } from "@modelmux/core";
import { startChaosUpstream, type ChaosUpstream } from "./chaos-upstream.ts";
import { postJson, startHarness, testConfig, type Harness } from "./harness.ts";

export const PRIMARY = "primary/gpt-4o";
export const BACKUP = "backup/gpt-4o";
export const CLAUDE = "claude/claude-chaos-1";

/** Small waits, so the suite is quick; the circuit needs more failures than one target's tries make. */
export const FAST_ROUTING = {
  retry: { attempts: 2, backoff: "20ms", max_backoff: "100ms", max_retry_after: "5s" },
  timeouts: { first_token: "500ms", idle: "500ms" },
  circuit_breaker: { failures: 5, cooldown: "1s" },
};

export interface ChaosRig {
  readonly primary: ChaosUpstream;
  readonly backup: ChaosUpstream;
  /** Starts this test's router; `edit` changes the config first. Closed after the test. */
  start(edit?: (config: ModelmuxConfig) => void, options?: RouterOptions): Promise<Harness>;
}

/** Registers the hooks that run the upstreams (per file) and the routers (per test). */
export function useChaosRouter(): ChaosRig {
  let primary: ChaosUpstream | undefined;
  let backup: ChaosUpstream | undefined;
  let harness: Harness | undefined;
  beforeAll(async () => {
    [primary, backup] = await Promise.all([startChaosUpstream({ name: "primary" }), startChaosUpstream({ name: "backup" })]);
  });
  beforeEach(() => {
    primary?.reset();
    backup?.reset();
  });
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });
  afterAll(async () => {
    await Promise.all([primary?.close(), backup?.close()]);
  });
  return {
    get primary() {
      return primary!;
    },
    get backup() {
      return backup!;
    },
    async start(edit, options) {
      const config = testConfig(
        {
          primary: { plugin: "provider-openai", base_url: primary!.openaiBaseUrl, api_key: "sk-primary", models: ["gpt-4o"], timeout: "3s" },
          backup: { plugin: "provider-openai", base_url: backup!.openaiBaseUrl, api_key: "sk-backup", models: ["gpt-4o"], timeout: "3s" },
          claude: { plugin: "provider-anthropic", base_url: backup!.anthropicBaseUrl, api_key: "sk-ant-backup", models: ["claude-chaos-1"], timeout: "3s" },
        },
        { routing: structuredClone(FAST_ROUTING), fallbacks: { [PRIMARY]: [BACKUP] } },
      );
      edit?.(config);
      harness = await startHarness(config, "http", options);
      return harness;
    },
  };
}

export const ASK = [{ role: "user" as const, content: "count" }];

/** A JSON chat completion through the SDK, with the reply's headers. */
export async function chat(h: Harness, model = PRIMARY, signal?: AbortSignal): Promise<{ completion: ChatCompletion; headers: Headers }> {
  const { data, response } = await h.openai.chat.completions.create({ model, messages: ASK }, { signal }).withResponse();
  return { completion: data, headers: response.headers };
}

/** The SDK's error of a call that must fail. */
export async function failure(call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await call;
  } catch (error) {
    if (error instanceof OpenAI.APIError) return error;
    throw error;
  }
  throw new Error("the call succeeded");
}

/** A chat stream read raw (what the SDK would forgive shows): its chunks, error events and end. */
export interface StreamRead {
  status: number;
  headers: Headers;
  /** The error reply's body when the status is not 200. */
  body?: unknown;
  text: string;
  finishes: string[];
  /** Error events' `error` objects. */
  errors: Array<{ message: string; type: string; code: string | null }>;
  done: boolean;
  /** Every event's data, in order. */
  events: string[];
}

/** Streams a chat completion with raw fetch and reads it to its end. */
export async function streamChat(h: Harness, model = PRIMARY): Promise<StreamRead> {
  const response = await h.request("/v1/chat/completions", { ...postJson({ model, messages: ASK, stream: true }), signal: AbortSignal.timeout(15_000) });
  const read: StreamRead = { status: response.status, headers: response.headers, text: "", finishes: [], errors: [], done: false, events: [] };
  if (response.status !== 200) {
    read.body = await response.json();
    return read;
  }
  const parser = createParser({
    onEvent: ({ data }) => {
      read.events.push(data);
      if (data === "[DONE]") return void (read.done = true);
      const parsed = JSON.parse(data) as ChatCompletionChunk & { error?: StreamRead["errors"][number] };
      if (parsed.error) return void read.errors.push(parsed.error);
      read.text += parsed.choices[0]?.delta.content ?? "";
      const finish = parsed.choices[0]?.finish_reason;
      if (finish) read.finishes.push(finish);
    },
  });
  parser.feed(await response.text());
  return read;
}

/** The headers that say what answered: `x-modelmux-model` and `x-modelmux-attempts`. */
export function routed(headers: Headers): { model: string | null; attempts: string | null } {
  return { model: headers.get("x-modelmux-model"), attempts: headers.get("x-modelmux-attempts") };
}

/** Gaps between an upstream's attempts, in ms. */
export function gaps(upstream: ChaosUpstream): number[] {
  return upstream.attempts.slice(1).map((attempt, i) => attempt.at - upstream.attempts[i]!.at);
}

/** A plain request succeeds on the primary once the scripts are spent: the router is healthy. */
export async function expectHealthy(h: Harness, model = PRIMARY): Promise<void> {
  const { completion, headers } = await chat(h, model);
  if (completion.choices[0]?.message.content !== "t0 t1 t2 t3 t4 t5 t6 t7") throw new Error(`unhealthy: ${JSON.stringify(completion)}`);
  if (headers.get("x-modelmux-model") !== model) throw new Error(`unhealthy: answered by ${headers.get("x-modelmux-model")}`);
}
