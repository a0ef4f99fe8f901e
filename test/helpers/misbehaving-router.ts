/**
 * The shared setup of the tests of what the router takes from an upstream
 * (`upstream-body-limit.test.ts`, `upstream-deadline.test.ts`): a router on a real port, with
 * `server.upstream_body_limit: 256kb` and its access log kept, in front of a misbehaving fake
 * upstream (`fixtures/fake-misbehaving-upstream.ts`) on another: `openai/…` and
 * `anthropic/claude-sonnet-4-5` with a 1 s timeout, `patient/gpt-4o-mini` with none, and
 * `/v1/responses` forwarded to `openai`. The official openai SDK (no retries) is the client.
 *
 * Call `useMisbehavingRouter` at the top level of a test file: it registers `beforeAll`,
 * `beforeEach` and `afterAll` hooks there.
 *
 * @example
 * const t = useMisbehavingRouter();
 * it("closes the connection", async () => {
 *   t.fake.next({ contentType: JSON_TYPE, body: CHAT_COMPLETION_HEAD, rest: { endless: true } });
 *   expect((await failure(t.h.openai.chat.completions.create(ask))).status).toBe(502);
 *   await t.closedSoon();
 * });
 */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, expect } from "vitest";
import { createLogger } from "../../core/src/logger.ts";
import { startMisbehavingUpstream, type MisbehavingUpstream } from "../fixtures/fake-misbehaving-upstream.ts";
import { startHarness, testConfig, type Harness } from "./harness.ts";
import { sleep, within } from "./wait.ts";

export const JSON_TYPE = "application/json";
export const SSE_TYPE = "text/event-stream";
/** `server.upstream_body_limit`, in bytes. */
export const LIMIT = 256 * 1024;

/** A chat request for the 1 s-timeout OpenAI model. */
export const ask = { model: "openai/gpt-4o-mini", messages: [{ role: "user" as const, content: "hi" }] };

export interface MisbehavingRouter {
  /** The fake upstream (inside tests and hooks), reset before each test. */
  readonly fake: MisbehavingUpstream;
  /** The router. */
  readonly h: Harness;
  /** Body bytes the router's HTTP client received from the fake since the test began (undici reports each chunk). */
  readonly received: number;
  /** A request id to find the request's access-log line by. */
  nextId(): string;
  /** The connection of request `index` to the upstream closes soon: resolves with the bytes the upstream had written. */
  closedSoon(index?: number): Promise<number>;
  /** The access-log line of request `id`, once the logger has written it. */
  accessLine(id: string): Promise<Record<string, unknown> | undefined>;
}

const BODY_CHUNK = "undici:request:bodyChunkReceived";

/** Registers the hooks that run the fake upstream and the router for this file. */
export function useMisbehavingRouter(): MisbehavingRouter {
  let fake: MisbehavingUpstream | undefined;
  let h: Harness | undefined;
  const log: Array<Record<string, unknown>> = [];
  let received = 0;
  let ids = 0;
  const countChunk = (message: unknown): void => {
    const { request, chunk } = message as { request: { origin?: unknown }; chunk: Buffer };
    if (fake && String(request.origin) === fake.url) received += chunk.length;
  };

  beforeAll(async () => {
    fake = await startMisbehavingUpstream();
    const providers = {
      openai: { plugin: "provider-openai", base_url: `${fake.url}/v1`, api_key: "sk-upstream", models: ["gpt-4o-mini", "gpt-4.1"], timeout: "1s" },
      anthropic: { plugin: "provider-anthropic", base_url: fake.url, api_key: "sk-ant-upstream", models: ["claude-sonnet-4-5"], timeout: "1s" },
      // No limit on the wait.
      patient: { plugin: "provider-openai", base_url: `${fake.url}/v1`, api_key: "sk-upstream", models: ["gpt-4o-mini"], timeout: 0 },
    };
    subscribe(BODY_CHUNK, countChunk);
    h = await startHarness(testConfig(providers, { server: { upstream_body_limit: "256kb" }, responses: { provider: "openai" } }), "http", {
      logger: createLogger({ level: "info", format: "json", write: (text) => void log.push(...text.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>)) }),
    });
  });
  beforeEach(() => {
    fake?.reset();
    received = 0;
  });
  afterAll(async () => {
    unsubscribe(BODY_CHUNK, countChunk);
    await h?.close();
    await fake?.close();
  });

  const running = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("The router and its upstream run only inside tests and hooks.");
    return value;
  };
  return {
    get fake() {
      return running(fake);
    },
    get h() {
      return running(h);
    },
    get received() {
      return received;
    },
    nextId: () => `limits-${++ids}`,
    async closedSoon(index = 0) {
      expect(running(fake).requests[index], `request ${index} reached the upstream`).toBeDefined();
      const outcome = await within(running(fake).connectionClosed(index), 3_000);
      expect(outcome, "the upstream connection stayed open").toBeDefined();
      return outcome!.bytesWritten;
    },
    async accessLine(id) {
      running(h).router.logger.flush();
      await sleep(50);
      running(h).router.logger.flush();
      return log.find((record) => record.request_id === id && record.status !== undefined);
    },
  };
}

/** What `promise` rejected with, which must be the openai SDK's `APIError`. */
export async function failure(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await promise.then(
    () => expect.fail("expected the call to fail"),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  return error as InstanceType<typeof OpenAI.APIError>;
}

/** Reads a stream with the SDK; what came before its error, and the error. */
export async function readStream(stream: AsyncIterable<unknown>): Promise<{ items: unknown[]; error: unknown }> {
  const items: unknown[] = [];
  try {
    for await (const item of stream) items.push(item);
  } catch (error) {
    return { items, error };
  }
  return { items, error: undefined };
}
