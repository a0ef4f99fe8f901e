/**
 * A request past the model's context goes to the next target, whichever provider refused it
 * (README, "Routing and resilience"): Anthropic's 400 `prompt is too long` (or its prompt plus
 * `max_tokens` over the limit) and Gemini's 400 `INVALID_ARGUMENT` "The input token count (…)
 * exceeds the maximum …" read as `context_length_exceeded`, as OpenAI's does. The router on a real
 * port; Anthropic is the chaos upstream's Messages wire (`helpers/chaos-router.ts`), Gemini the fake
 * Gemini API (`fixtures/fake-gemini.ts`); the fallback is provider-openai on the chaos primary.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeGemini, type FakeGemini } from "./fixtures/fake-gemini.ts";
import { CHAOS_ERRORS } from "./helpers/chaos-upstream.ts";
import { chat, CLAUDE, failure, PRIMARY, routed, streamChat, useChaosRouter } from "./helpers/chaos-router.ts";

const rig = useChaosRouter();
const WHOLE = "t0 t1 t2 t3 t4 t5 t6 t7";
const GEMINI = "gemini/gemini-2.5-pro";

describe("Anthropic's 400 for a prompt past the context", () => {
  it("'prompt is too long': the next target answers; Anthropic is tried once", async () => {
    const h = await rig.start((config) => (config.fallbacks = { [CLAUDE]: [PRIMARY] }));
    // Anthropic's own words on the backup's Messages wire: "prompt is too long: 210000 tokens > 200000 maximum".
    rig.backup.script(CHAOS_ERRORS.contextLengthExceeded);
    const { completion, headers } = await chat(h, CLAUDE);
    expect(completion.choices[0]!.message.content).toBe(WHOLE);
    expect(completion.id).toMatch(/^chatcmpl-primary-/);
    expect(routed(headers)).toEqual({ model: PRIMARY, attempts: "2" });
    expect(rig.backup.attempts.map((a) => [a.path, a.status])).toEqual([["/v1/messages", 400]]);
    expect(rig.primary.attempts.map((a) => a.status)).toEqual([200]);
  });

  it("'input length and max_tokens exceed context limit', on a stream: the next target's stream", async () => {
    const h = await rig.start((config) => (config.fallbacks = { [CLAUDE]: [PRIMARY] }));
    const message = "input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, decrease input length or `max_tokens` and try again";
    rig.backup.script({ ...CHAOS_ERRORS.contextLengthExceeded, message });
    const read = await streamChat(h, CLAUDE);
    expect(read).toMatchObject({ status: 200, text: WHOLE, finishes: ["stop"], errors: [], done: true });
    expect(routed(read.headers)).toEqual({ model: PRIMARY, attempts: "2" });
    expect(rig.backup.attempts).toHaveLength(1);
  });

  it("with no other target: the 400 as context_length_exceeded, with Anthropic's message", async () => {
    const h = await rig.start();
    rig.backup.script(CHAOS_ERRORS.contextLengthExceeded);
    const error = await failure(chat(h, CLAUDE));
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ type: "invalid_request_error", code: "context_length_exceeded" });
    expect(error.message).toContain("prompt is too long: 210000 tokens > 200000 maximum");
    expect(rig.backup.attempts).toHaveLength(1);
  });
});

describe("Gemini's 400 INVALID_ARGUMENT for input tokens past the maximum", () => {
  let gemini: FakeGemini;
  beforeAll(async () => {
    gemini = await startFakeGemini();
  });
  beforeEach(() => gemini.reset());
  afterAll(() => gemini.close());

  it("the next target answers; Gemini is tried once", async () => {
    const h = await rig.start((config) => {
      config.providers.gemini = { plugin: "provider-gemini", ...gemini.options, models: ["gemini-2.5-pro"], timeout: "3s" };
      config.fallbacks = { [GEMINI]: [PRIMARY] };
    });
    gemini.next({ error: { status: 400, message: "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576)." } });
    const { completion, headers } = await chat(h, GEMINI);
    expect(completion.choices[0]!.message.content).toBe(WHOLE);
    expect(routed(headers)).toEqual({ model: PRIMARY, attempts: "2" });
    expect(gemini.requests).toHaveLength(1);
    expect(rig.primary.attempts.map((a) => a.status)).toEqual([200]);
  });
});
