/**
 * Images and `/v1/responses` under routing (README, "Routing and resilience"): images are retried
 * and fall back like chat; `/v1/responses` is retried on its one provider before its first byte,
 * and never once its stream has started (a stream cut mid-way ends with the responses error
 * event). Chaos upstreams and the router on real ports (`helpers/chaos-router.ts`): `dall-e-3` on
 * the primary falls back to `dall-e-3` on the backup; `responses.provider` is the primary.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { describe, expect, it } from "vitest";
import type { ModelmuxConfig } from "@modelmux/core";
import { FAKE_PNG_BASE64 } from "./fixtures/fake-openai-responses.ts";
import { CHAOS_ERRORS } from "./helpers/chaos-upstream.ts";
import { failure, gaps, PRIMARY, routed, useChaosRouter } from "./helpers/chaos-router.ts";
import { postJson, type Harness } from "./helpers/harness.ts";
import { sleep } from "./helpers/wait.ts";

const rig = useChaosRouter();
const WHOLE = "t0 t1 t2 t3 t4 t5 t6 t7";
const IMAGES = "primary/dall-e-3";
const BACKUP_IMAGES = "backup/dall-e-3";

/** Image models on both upstreams, the primary's falling back to the backup's; responses forwarded to the primary. */
function withImagesAndResponses(config: ModelmuxConfig): void {
  config.providers.primary!.models = ["gpt-4o", "dall-e-3"];
  config.providers.backup!.models = ["gpt-4o", "dall-e-3"];
  config.fallbacks = { ...config.fallbacks, [IMAGES]: [BACKUP_IMAGES] };
  config.responses = { provider: "primary" };
}

const start = () => rig.start(withImagesAndResponses);

async function generate(h: Harness) {
  const { data, response } = await h.openai.images.generate({ model: IMAGES, prompt: "a cat", response_format: "b64_json" }).withResponse();
  return { image: data.data?.[0], headers: response.headers };
}

async function respond(h: Harness) {
  const { data, response } = await h.openai.responses.create({ model: PRIMARY, input: "count" }).withResponse();
  return { response: data, headers: response.headers };
}

/** A streamed response read raw to its end (or its break): status, headers, event types and their data. */
async function streamResponse(h: Harness): Promise<{ status: number; headers: Headers; events: EventSourceMessage[]; body?: unknown }> {
  const reply = await h.request("/v1/responses", { ...postJson({ model: PRIMARY, input: "count", stream: true }), signal: AbortSignal.timeout(15_000) });
  if (reply.status !== 200) return { status: reply.status, headers: reply.headers, events: [], body: await reply.json() };
  const events: EventSourceMessage[] = [];
  createParser({ onEvent: (event) => void events.push(event) }).feed(await reply.text());
  return { status: reply.status, headers: reply.headers, events };
}

const textOf = (events: EventSourceMessage[]) =>
  events
    .filter((e) => e.event === "response.output_text.delta")
    .map((e) => (JSON.parse(e.data) as { delta: string }).delta)
    .join("");

describe("images", () => {
  it("a 503 once: retried on the same target, then answered", async () => {
    const h = await start();
    rig.primary.script(CHAOS_ERRORS.unavailable);
    const { image, headers } = await generate(h);
    expect(image).toEqual({ b64_json: FAKE_PNG_BASE64, revised_prompt: WHOLE });
    expect(routed(headers)).toEqual({ model: IMAGES, attempts: "2" });
    expect(rig.primary.attempts.map((a) => [a.path, a.status])).toEqual([
      ["/v1/images/generations", 503],
      ["/v1/images/generations", 200],
    ]);
    expect(rig.backup.attempts).toHaveLength(0);
  });

  it("a 429 with Retry-After: waits it, then the same target answers", async () => {
    const h = await start();
    rig.primary.script({ ...CHAOS_ERRORS.rateLimit, retryAfter: "1" });
    const started = performance.now();
    const { headers } = await generate(h);
    expect(routed(headers)).toEqual({ model: IMAGES, attempts: "2" });
    expect(rig.primary.attempts.map((a) => a.status)).toEqual([429, 200]);
    expect(gaps(rig.primary)[0]).toBeGreaterThanOrEqual(950);
    expect(performance.now() - started).toBeLessThan(6_000);
  });

  it("503 forever on the primary: its tries, then the backup answers", async () => {
    const h = await start();
    rig.primary.setDefault(CHAOS_ERRORS.unavailable);
    const { image, headers } = await generate(h);
    expect(image?.revised_prompt).toBe(WHOLE);
    expect(routed(headers)).toEqual({ model: BACKUP_IMAGES, attempts: "4" });
    expect(rig.primary.attempts.map((a) => a.status)).toEqual([503, 503, 503]);
    expect(rig.backup.attempts.map((a) => [a.path, a.status])).toEqual([["/v1/images/generations", 200]]);
  });

  it("a reset before any reply byte, then a hang: retried, then the backup answers after the timeout", async () => {
    const h = await rig.start((config) => {
      withImagesAndResponses(config);
      config.providers.primary!.timeout = "1s";
    });
    rig.primary.script("reset", "hang");
    const started = performance.now();
    const { headers } = await generate(h);
    expect(routed(headers)).toEqual({ model: BACKUP_IMAGES, attempts: "3" });
    expect(rig.primary.attempts.map((a) => a.behaviour)).toEqual(["reset", "hang"]);
    expect(performance.now() - started).toBeLessThan(6_000);
  });
});

describe("/v1/responses, before its first byte", () => {
  it("a 500 once: retried on its one provider, then answered", async () => {
    const h = await start();
    rig.primary.script(CHAOS_ERRORS.serverError);
    const { response, headers } = await respond(h);
    expect(response.output_text).toBe(WHOLE);
    expect(response.id).toBe("resp_primary_1");
    expect(headers.get("x-modelmux-attempts")).toBe("2");
    expect(rig.primary.attempts.map((a) => [a.path, a.status])).toEqual([
      ["/v1/responses", 500],
      ["/v1/responses", 200],
    ]);
    expect(rig.backup.attempts).toHaveLength(0);
  });

  it("a stream after a 429 with Retry-After: waits it, then the whole stream from the retry", async () => {
    const h = await start();
    rig.primary.script({ ...CHAOS_ERRORS.rateLimit, retryAfter: "1" });
    const started = performance.now();
    const read = await streamResponse(h);
    expect(read.status).toBe(200);
    expect(read.headers.get("x-modelmux-attempts")).toBe("2");
    expect(textOf(read.events)).toBe(WHOLE);
    expect(read.events.at(-1)!.event).toBe("response.completed");
    expect(rig.primary.attempts.map((a) => a.status)).toEqual([429, 200]);
    expect(gaps(rig.primary)[0]).toBeGreaterThanOrEqual(950);
    expect(performance.now() - started).toBeLessThan(6_000);
  });

  it("down for a while, asking to wait past it: retried after the wait, no other provider asked", async () => {
    const h = await start();
    rig.primary.script({ downFor: 400, retryAfter: "1" });
    const started = performance.now();
    const { response, headers } = await respond(h);
    expect(response.output_text).toBe(WHOLE);
    expect(headers.get("x-modelmux-attempts")).toBe("2");
    expect(rig.primary.attempts.map((a) => [a.behaviour, a.status])).toEqual([
      ["downFor", 503],
      ["ok", 200],
    ]);
    expect(rig.backup.attempts).toHaveLength(0);
    expect(performance.now() - started).toBeLessThan(6_000);
  });

  it("503 forever: its first try and 2 retries, then the provider's error (502), no hang", async () => {
    const h = await start();
    rig.primary.setDefault({ ...CHAOS_ERRORS.unavailable, message: "The responses API is overloaded." });
    const error = await failure(h.openai.responses.create({ model: PRIMARY, input: "count" }));
    expect(error.status).toBe(502);
    expect(error.message).toContain("The responses API is overloaded.");
    expect(error.headers?.get("x-modelmux-attempts")).toBe("3");
    expect(rig.primary.attempts.map((a) => a.status)).toEqual([503, 503, 503]);
    expect(rig.backup.attempts).toHaveLength(0);
  });
});

describe("/v1/responses, once its stream started", () => {
  it("a stream cut mid-way: the text so far, then the responses error event; the provider saw one attempt", async () => {
    const h = await start();
    rig.primary.script({ cutAfter: 3 });
    const read = await streamResponse(h);
    expect(read.status).toBe(200);
    expect(read.headers.get("x-modelmux-attempts")).toBe("1");
    expect(textOf(read.events)).toBe("t0 t1 t2");
    expect(read.events.map((e) => e.event)).not.toContain("response.completed");
    expect(read.events.at(-1)!.event).toBe("error");
    expect(JSON.parse(read.events.at(-1)!.data)).toMatchObject({ type: "error", code: "upstream_error" });
    // Time for a retry that must not come.
    await sleep(300);
    expect(rig.primary.attempts).toHaveLength(1);
  });

  it("the provider's own error event mid-way: relayed as the stream's end, never retried", async () => {
    const h = await start();
    rig.primary.script({ errorAfter: 2 });
    const read = await streamResponse(h);
    expect(textOf(read.events)).toBe("t0 t1");
    expect(read.events.at(-1)!.event).toBe("error");
    await sleep(300);
    expect(rig.primary.attempts).toHaveLength(1);
  });
});
