/**
 * `routing.timeouts.connect` (README, "Routing and resilience"): a target whose new connection
 * never completes has timed out once `connect` passed, long before its provider's `timeout`; it is
 * not tried again, and the fallback answers. The primary's `base_url` is a silent port on
 * 127.0.0.1 (`helpers/silent-port.ts`: a listener whose full accept queue makes Linux drop each
 * SYN); the backup is a chaos upstream, the router on a real port (`helpers/chaos-router.ts`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ModelmuxConfig } from "@modelmux/core";
import { BACKUP, chat, failure, PRIMARY, routed, streamChat, useChaosRouter } from "./helpers/chaos-router.ts";
import type { Harness } from "./helpers/harness.ts";
import { startSilentPort, type SilentPort } from "./helpers/silent-port.ts";

const rig = useChaosRouter();
const WHOLE = "t0 t1 t2 t3 t4 t5 t6 t7";
let silent: SilentPort;

beforeAll(async () => {
  silent = await startSilentPort();
});
afterAll(() => silent?.close());

/**
 * Starts the router and answers one request on the backup first, so what is timed below is the
 * routing, not the first request's loading.
 */
async function startWarm(edit: (config: ModelmuxConfig) => void): Promise<Harness> {
  const h = await rig.start(edit);
  await chat(h, BACKUP);
  rig.backup.reset();
  return h;
}

/**
 * The primary's connections hang; its connect limit is 300 ms. Its whole-call timeout (30 s), and
 * the connect default (5 s) were `connect` not applied, are far longer than the bound the tests
 * check (4 s).
 */
function connectHangs(config: ModelmuxConfig): void {
  config.providers.primary!.base_url = `${silent.url}/v1`;
  config.providers.primary!.timeout = "30s";
  config.routing!.timeouts = { ...config.routing!.timeouts, connect: "300ms" };
}

describe("a target whose connect hangs", () => {
  it("JSON: times out after connect, is not retried, and the fallback answers", async () => {
    const h = await startWarm(connectHangs);
    const started = performance.now();
    const { completion, headers } = await chat(h);
    expect(completion.choices[0]!.message.content).toBe(WHOLE);
    expect(routed(headers)).toEqual({ model: BACKUP, attempts: "2" });
    expect(rig.backup.attempts).toHaveLength(1);
    // It waited for the connect, and not for the provider's 30 s or the default connect limit.
    expect(rig.backup.attempts[0]!.at - started).toBeGreaterThanOrEqual(250);
    expect(performance.now() - started).toBeLessThan(4_000);
  });

  it("stream: the fallback answers the stream (first_token and idle longer, so connect is what ends it)", async () => {
    const h = await startWarm((config) => {
      connectHangs(config);
      config.routing!.timeouts = { connect: "300ms", first_token: "20s", idle: "20s" };
    });
    const started = performance.now();
    const read = await streamChat(h);
    expect(read).toMatchObject({ status: 200, text: WHOLE, finishes: ["stop"], errors: [], done: true });
    expect(routed(read.headers)).toEqual({ model: BACKUP, attempts: "2" });
    expect(performance.now() - started).toBeLessThan(4_000);
  });

  it("a provider block's own connect limit wins over routing's", async () => {
    const h = await startWarm((config) => {
      connectHangs(config);
      config.routing!.timeouts = { ...config.routing!.timeouts, connect: "20s" };
      config.providers.primary!.timeouts = { connect: "300ms" };
    });
    const started = performance.now();
    const { headers } = await chat(h);
    expect(routed(headers)).toEqual({ model: BACKUP, attempts: "2" });
    expect(performance.now() - started).toBeLessThan(4_000);
  });

  it("with no fallback: 504 upstream_timeout after one attempt", async () => {
    const h = await startWarm((config) => {
      connectHangs(config);
      delete config.fallbacks;
    });
    const started = performance.now();
    const error = await failure(chat(h, PRIMARY));
    expect(error.status).toBe(504);
    expect(error.error).toMatchObject({ type: "api_error", code: "upstream_timeout" });
    expect(error.headers?.get("x-modelmux-attempts")).toBe("1");
    expect(rig.backup.attempts).toHaveLength(0);
    expect(performance.now() - started).toBeLessThan(4_000);
  });
});
