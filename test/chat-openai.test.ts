/**
 * Chat completions end to end: the official openai SDK → modelmux → provider-openai → a fake
 * OpenAI upstream on 127.0.0.1. Every suite runs in-process (fetch handler) and over a real port.
 */
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./fixtures/fake-openai.ts";
import { postJson, readSse, startHarness, testConfig, TRANSPORTS, type Harness } from "./helpers/harness.ts";

const UPSTREAM_KEY = "sk-upstream-secret-123";
const weatherTool = {
  type: "function" as const,
  function: { name: "get_weather", description: "Weather for a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
};

for (const transport of TRANSPORTS) {
  describe(`chat completions via provider-openai (${transport})`, () => {
    let fake: FakeOpenAI;
    let h: Harness;

    beforeAll(async () => {
      fake = await startFakeOpenAI({ apiKey: UPSTREAM_KEY });
      h = await startHarness(
        testConfig(
          {
            openai: { plugin: "provider-openai", base_url: fake.url, api_key: UPSTREAM_KEY, models: ["gpt-4o-mini"], timeout: "1s" },
            // A second entry pointed at any OpenAI-compatible server by base_url (trailing slash too).
            compat: { plugin: "provider-openai", base_url: `${fake.url}/`, api_key: UPSTREAM_KEY, models: ["llama-3.1-8b"] },
          },
          // One call per request: this suite checks how a call maps; the router's retries have their own suite.
          { aliases: { fast: "openai/gpt-4o-mini" }, routing: { retry: { attempts: 0 } } },
        ),
        transport,
      );
    });
    afterEach(() => fake.reset());
    afterAll(async () => {
      await h.close();
      await fake.close();
    });

    it("answers a JSON completion and sends the upstream the bare model, its key, and no router fields", async () => {
      const reply = await h.openai.chat.completions.create({
        model: "openai/gpt-4o-mini",
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "Hello upstream" },
        ],
        temperature: 0.5,
        metadata: { team: "a" },
      });
      expect(reply.object).toBe("chat.completion");
      expect(reply.choices[0]!.message.content).toBe("Echo: Hello upstream");
      expect(reply.choices[0]!.finish_reason).toBe("stop");
      expect(reply.usage!.total_tokens).toBe(reply.usage!.prompt_tokens + reply.usage!.completion_tokens);
      expect(reply).not.toHaveProperty("service_tier");
      const sent = fake.requests[0]!;
      expect(sent.path).toBe("/v1/chat/completions");
      expect(sent.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
      expect(sent.body).toMatchObject({ model: "gpt-4o-mini", temperature: 0.5, stream: false });
      expect(sent.body).not.toHaveProperty("metadata");
      expect(sent.body).not.toHaveProperty("store");
    });

    it("routes an alias and a second OpenAI-compatible provider entry", async () => {
      await h.openai.chat.completions.create({ model: "fast", messages: [{ role: "user", content: "a" }] });
      const compat = await h.openai.chat.completions.create({ model: "compat/llama-3.1-8b", messages: [{ role: "user", content: "b" }] });
      expect(compat.choices[0]!.message.content).toBe("Echo: b");
      expect(fake.requests.map((r) => r.body?.model)).toEqual(["gpt-4o-mini", "llama-3.1-8b"]);
    });

    it("keeps service_tier only when the request set it", async () => {
      const reply = await h.openai.chat.completions.create({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "x" }], service_tier: "default" });
      expect(reply.service_tier).toBe("default");
      const res = await h.request("/v1/chat/completions", postJson({ model: "openai/gpt-4o-mini", stream: true, messages: [{ role: "user", content: "x" }] }));
      const events = await readSse(res);
      for (const data of events.slice(0, -1)) expect(JSON.parse(data)).not.toHaveProperty("service_tier");
    });

    it("streams chunks through the SDK, with the usage chunk only when asked", async () => {
      const stream = await h.openai.chat.completions.create({
        model: "openai/gpt-4o-mini",
        messages: [{ role: "user", content: "one two three four" }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = "";
      let chunks = 0;
      let usage: OpenAI.CompletionUsage | null | undefined;
      for await (const chunk of stream) {
        chunks++;
        text += chunk.choices[0]?.delta.content ?? "";
        if (chunk.usage) usage = chunk.usage;
      }
      expect(text).toBe("Echo: one two three four");
      expect(chunks).toBeGreaterThan(3);
      expect(usage?.total_tokens).toBeGreaterThan(0);
      expect(fake.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });

      fake.reset();
      const res = await h.request("/v1/chat/completions", postJson({ model: "openai/gpt-4o-mini", stream: true, messages: [{ role: "user", content: "x y" }] }));
      expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
      const events = await readSse(res);
      expect(events.at(-1)).toBe("[DONE]");
      // The router always asks the upstream for usage, and hides it from a client that did not ask.
      expect(fake.requests[0]!.body).toMatchObject({ stream_options: { include_usage: true } });
      expect(events.slice(0, -1).every((data) => (JSON.parse(data) as { choices: unknown[] }).choices.length > 0)).toBe(true);
    });

    it("works with the SDK's stream() helper and finalChatCompletion()", async () => {
      const runner = h.openai.chat.completions.stream({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "helper text" }] });
      const deltas: string[] = [];
      runner.on("content", (delta) => deltas.push(delta));
      const final = await runner.finalChatCompletion();
      expect(final.choices[0]!.message.content).toBe("Echo: helper text");
      expect(deltas.join("")).toBe("Echo: helper text");
    });

    it("passes tool calls through, JSON and streamed, and the tool result turn", async () => {
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Use get_weather for Paris" }];
      const json = await h.openai.chat.completions.create({ model: "openai/gpt-4o-mini", messages, tools: [weatherTool] });
      const call = json.choices[0]!.message.tool_calls![0]!;
      expect(json.choices[0]!.finish_reason).toBe("tool_calls");
      expect(call.type === "function" && call.function.name).toBe("get_weather");

      const runner = h.openai.chat.completions.stream({ model: "openai/gpt-4o-mini", messages, tools: [weatherTool] });
      const streamed = (await runner.finalChatCompletion()).choices[0]!.message.tool_calls![0]!;
      expect(streamed.type === "function" && streamed.function).toEqual(call.type === "function" && call.function);

      const answer = await h.openai.chat.completions.create({
        model: "openai/gpt-4o-mini",
        tools: [weatherTool],
        messages: [...messages, json.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: "sunny, 21C" }],
      });
      expect(answer.choices[0]!.message.content).toBe("Tool result: sunny, 21C");
      expect(fake.requests.at(-1)!.body!.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: call.id });
    });

    it("maps upstream errors to the envelope and the SDK's typed errors", async () => {
      const ask = () => h.openai.chat.completions.create({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "x" }] });
      fake.setNext({ error: { status: 400, message: "Invalid schema for function 'f'", param: "tools[0]", code: "invalid_function_parameters" } });
      const bad = await ask().catch((e: unknown) => e);
      expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
      expect((bad as InstanceType<typeof OpenAI.APIError>).message).toContain("Invalid schema for function 'f'");
      expect((bad as InstanceType<typeof OpenAI.APIError>).type).toBe("invalid_request_error");

      fake.setNext({ error: { status: 429, message: "Slow down", retryAfter: "7" } });
      const limited = (await ask().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
      expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
      expect(limited.headers?.get("retry-after")).toBe("7");
      expect(limited.type).toBe("rate_limit_error");

      fake.setNext({ error: { status: 503, message: "overloaded" } });
      const down = (await ask().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
      expect(down.status).toBe(502);
      expect(down.code).toBe("upstream_error");

      fake.setNext({ error: { status: 401, message: "Incorrect API key provided" } });
      const upstreamAuth = (await ask().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
      expect(upstreamAuth.status).toBe(401);
      expect(JSON.stringify(upstreamAuth.error)).not.toContain(UPSTREAM_KEY);

      fake.setNext({ raw: { body: "{not json" } });
      const unreadable = (await ask().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
      expect(unreadable.status).toBe(502);
    });

    it("answers 504 when the upstream exceeds its timeout", async () => {
      // Well past the 1 s timeout: undici checks its timers about every 0.5 s, later on a loaded machine.
      fake.setNext({ delayMs: 5000 });
      const res = await h.request("/v1/chat/completions", postJson({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "x" }] }));
      expect(res.status).toBe(504);
      expect(await res.json()).toMatchObject({ error: { type: "api_error", code: "upstream_timeout" } });
    });

    it("ends a stream that breaks mid-way with one error event and no [DONE]", async () => {
      fake.setNext({ streamFailure: { afterChunks: 2, mode: "destroy" } });
      const res = await h.request("/v1/chat/completions", postJson({ model: "openai/gpt-4o-mini", stream: true, messages: [{ role: "user", content: "a b c d e" }] }));
      expect(res.status).toBe(200);
      const events = await readSse(res);
      expect(events).toHaveLength(3);
      expect(events).not.toContain("[DONE]");
      expect(JSON.parse(events[2]!)).toMatchObject({ error: { type: "api_error", code: "upstream_error" } });

      // After the role chunk and one word: the client has content, so the error comes as an event.
      fake.setNext({ streamFailure: { afterChunks: 2, mode: "error_event" } });
      const sdkStream = await h.openai.chat.completions.create({ model: "openai/gpt-4o-mini", stream: true, messages: [{ role: "user", content: "a b c" }] });
      await expect(
        (async () => {
          for await (const _chunk of sdkStream);
        })(),
      ).rejects.toBeInstanceOf(OpenAI.APIError);

      // Before any content (the role chunk alone), nothing has been sent: the client gets an error reply.
      fake.setNext({ streamFailure: { afterChunks: 1, mode: "error_event" } });
      const early = await h.request("/v1/chat/completions", postJson({ model: "openai/gpt-4o-mini", stream: true, messages: [{ role: "user", content: "a b c" }] }));
      expect(early.status).toBe(502);
      expect(((await early.json()) as { error: { code: string } }).error.code).toBe("upstream_error");
    });

    it("aborts the upstream request when the client goes away mid-stream", async () => {
      // compat/ has the default 600 s timeout: only the client's leaving can end this stall.
      fake.setNext({ streamFailure: { afterChunks: 2, mode: "stall" } });
      const controller = new AbortController();
      const stream = await h.openai.chat.completions.create(
        { model: "compat/llama-3.1-8b", stream: true, messages: [{ role: "user", content: "a b c d" }] },
        { signal: controller.signal },
      );
      for await (const _chunk of stream) {
        controller.abort();
        break;
      }
      const gaveUp = new Promise<"still open">((resolve) => setTimeout(resolve, 5000, "still open"));
      const outcome = await Promise.race([fake.finished(0).then((r) => (r.aborted ? "aborted" : "completed")), gaveUp]);
      expect(outcome).toBe("aborted");
    });
  });
}
