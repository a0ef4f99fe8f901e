/**
 * The access log explains every request (README, "Access log"): the model as sent and as served,
 * time to first byte and upstream time, tokens, and on an error reply or a stream that failed its
 * error code and reason, so an app's own rate limit, a provider's 429, a 502 and a 504 can be told
 * apart. A failed stream is logged as failed, and its warning is one line without a stack. The
 * router on a real port in front of chaos upstreams, the openai SDK and raw fetch as clients.
 */
import { describe, expect, it } from "vitest";
import { createLogger, type Logger } from "../core/src/logger.ts";
import { CHAOS_ERRORS } from "./helpers/chaos-upstream.ts";
import { ASK, PRIMARY, streamChat, useChaosRouter } from "./helpers/chaos-router.ts";
import { postJson, type Harness } from "./helpers/harness.ts";

const rig = useChaosRouter();

interface Captured {
  logger: Logger;
  lines: string[];
}

function capture(): Captured {
  const lines: string[] = [];
  return { logger: createLogger({ level: "info", format: "json", write: (text) => lines.push(...text.split("\n").filter(Boolean)) }), lines };
}

/** The access line of the request with `requestId`, once written. */
async function accessLine(log: Captured, requestId: string): Promise<Record<string, unknown>> {
  let found: Record<string, unknown> | undefined;
  await expect
    .poll(() => {
      log.logger.flush();
      found = log.lines.map((line) => JSON.parse(line) as Record<string, unknown>).find((record) => record.request_id === requestId && record.status !== undefined);
      return found !== undefined;
    })
    .toBe(true);
  return found!;
}

async function send(h: Harness, body: Record<string, unknown>, requestId: string): Promise<Response> {
  const response = await h.request("/v1/chat/completions", postJson({ model: PRIMARY, messages: ASK, ...body }, { "x-request-id": requestId }));
  await response.text();
  return response;
}

describe("access log fields", () => {
  it("a JSON answer through an alias: the model as sent and served, times, tokens, who", async () => {
    const log = capture();
    const h = await rig.start((config) => void (config.aliases = { smart: PRIMARY }), { logger: log.logger });
    await send(h, { model: "smart" }, "log-ok");
    const line = await accessLine(log, "log-ok");
    expect(line).toMatchObject({ status: 200, outcome: "ok", requested_model: "smart", model: PRIMARY, prompt_tokens: 10, completion_tokens: 8, total_tokens: 18, app: "test-app", developer: "tester" });
    expect(line.ttfb_ms).toBeGreaterThan(0);
    expect(line.upstream_ms).toBeGreaterThan(0);
    expect(line.upstream_ms as number).toBeLessThanOrEqual(line.duration_ms as number);
    expect(line).not.toHaveProperty("error_code");
    expect(line).not.toHaveProperty("stream");
  });

  it("tells the app's own rate limit, a provider's 429, a 502 and a 504 apart", async () => {
    const log = capture();
    const h = await rig.start(
      (config) => {
        config.fallbacks = {};
        config.routing = { retry: { attempts: 0 } };
        config.providers.primary!.timeout = "300ms";
        config.rate_limit = { app: { requests: 4, window: "60s" } };
      },
      { logger: log.logger },
    );
    rig.primary.script(CHAOS_ERRORS.rateLimit, { status: 502 }, "hang");
    await send(h, {}, "log-429-provider");
    await send(h, {}, "log-502");
    await send(h, {}, "log-504");
    await send(h, {}, "log-ok-4");
    await send(h, {}, "log-429-app");
    const provider429 = await accessLine(log, "log-429-provider");
    const app429 = await accessLine(log, "log-429-app");
    expect(provider429).toMatchObject({ status: 429, outcome: "error", error_code: "rate_limit_exceeded", model: PRIMARY });
    expect(app429).toMatchObject({ status: 429, outcome: "error", error_code: "rate_limit_exceeded" });
    expect(app429.reason).toContain("app 'test-app'");
    expect(provider429.reason).not.toContain("app 'test-app'");
    expect(await accessLine(log, "log-502")).toMatchObject({ status: 502, outcome: "error", error_code: expect.any(String) });
    expect(await accessLine(log, "log-504")).toMatchObject({ status: 504, outcome: "error", error_code: "upstream_timeout" });
  });

  it("a stream that fails mid-way is logged as failed, with its code; its warning is one line", async () => {
    const log = capture();
    const h = await rig.start((config) => void (config.fallbacks = {}), { logger: log.logger });
    rig.primary.script({ cutAfter: 3 });
    const response = await h.request("/v1/chat/completions", postJson({ model: PRIMARY, messages: ASK, stream: true }, { "x-request-id": "log-stream-cut" }));
    const text = await response.text();
    expect(text).toContain('"error"');
    const line = await accessLine(log, "log-stream-cut");
    expect(line).toMatchObject({ status: 200, outcome: "stream_failed", stream: true, error_code: "upstream_error", model: PRIMARY });
    const warnings = log.lines.filter((entry) => entry.includes("failed mid-way"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).not.toMatch(/\n|\\n\s+at /);
  });

  it("a stream whose first attempt failed before content and whose fallback answered is logged as ok", async () => {
    const log = capture();
    const h = await rig.start(undefined, { logger: log.logger });
    rig.primary.script({ malformedAfter: 0 });
    const response = await h.request("/v1/chat/completions", postJson({ model: PRIMARY, messages: ASK, stream: true }, { "x-request-id": "log-stream-fallback" }));
    expect(await response.text()).toContain("[DONE]");
    const line = await accessLine(log, "log-stream-fallback");
    expect(line).toMatchObject({ status: 200, outcome: "ok", stream: true, model: "backup/gpt-4o" });
    expect(line).not.toHaveProperty("error_code");
    expect(log.lines.filter((entry) => entry.includes("failed mid-way"))).toEqual([]);
  });

  it("a whole stream is logged as ok, with its usage", async () => {
    const log = capture();
    const h = await rig.start(undefined, { logger: log.logger });
    const read = await streamChat(h);
    expect(read.done).toBe(true);
    log.logger.flush();
    const line = log.lines.map((entry) => JSON.parse(entry) as Record<string, unknown>).find((record) => record.stream === true);
    expect(line).toMatchObject({ status: 200, outcome: "ok", completion_tokens: 8 });
  });
});
