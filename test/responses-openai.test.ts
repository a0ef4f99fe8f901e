/**
 * End-to-end proof of the forwarded responses API (docs/interface.md, "Responses API"): an agent on
 * the official openai SDK's responses API runs through modelmux unchanged against a fake OpenAI
 * upstream on 127.0.0.1 that speaks the real wire format (test/fixtures/fake-openai-responses.ts):
 * bodies reach the upstream unchanged but for the model name, replies come back unchanged, streams
 * byte for byte, background responses can be polled and cancelled, provider errors arrive in the
 * envelope with the provider's status.
 */
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../core/src/logger.ts";
import { FAKE_PNG_BASE64, startFakeOpenAIResponses, type FakeOpenAIResponses, weatherTool } from "./fixtures/fake-openai-responses.ts";
import { postJson, startHarness, testConfig, TRANSPORTS, type Harness } from "./helpers/harness.ts";

const UPSTREAM_KEY = "sk-upstream-responses-42";
type ApiError = InstanceType<typeof OpenAI.APIError>;

for (const transport of TRANSPORTS) {
  describe(`responses and images via provider-openai (${transport})`, () => {
    let fake: FakeOpenAIResponses;
    let h: Harness;
    const logLines: string[] = [];
    beforeAll(async () => {
      fake = await startFakeOpenAIResponses({ apiKey: UPSTREAM_KEY });
      h = await startHarness(
        testConfig(
          {
            openai: { plugin: "provider-openai", base_url: fake.url, api_key: UPSTREAM_KEY, models: ["gpt-4.1", "gpt-image-1", "dall-e-3"], timeout: "2s" },
            echo: { plugin: "provider-echo", models: ["echo-1"] },
          },
          // One call per request: this suite checks how a call maps; the router's retries have their own suite.
          { responses: { provider: "openai" }, routing: { retry: { attempts: 0 } } },
        ),
        transport,
        { logger: createLogger({ level: "info", format: "json", write: (text: string) => logLines.push(...text.trim().split("\n")) }) },
      );
    });
    afterEach(() => fake.reset());
    afterAll(async () => {
      await h.close();
      await fake.close();
    });

    it("forwards every field unchanged but the model name, and relays the JSON reply unchanged", async () => {
      const params = {
        model: "openai/gpt-4.1",
        input: [
          { role: "system" as const, content: "You are terse." },
          { role: "user" as const, content: [{ type: "input_text" as const, text: "What is in this image?" }, { type: "input_image" as const, image_url: "https://example.com/a.png", detail: "low" as const }] },
          { type: "function_call_output" as const, call_id: "call_1", output: '{"temp":21}' },
          { type: "item_reference" as const, id: "msg_earlier" },
        ],
        instructions: "Answer in French.",
        tools: [weatherTool, { type: "web_search" as const }, { type: "file_search" as const, vector_store_ids: ["vs_1"] }, { type: "mcp" as const, server_label: "deepwiki", server_url: "https://mcp.example.com", require_approval: "never" as const }],
        tool_choice: "auto" as const,
        include: ["reasoning.encrypted_content" as const],
        reasoning: { effort: "low" as const, summary: "auto" as const },
        text: { format: { type: "json_schema" as const, name: "answer", schema: { type: "object", properties: { a: { type: "string" } } } }, verbosity: "low" as const },
        conversation: "conv_123",
        metadata: { trace: "t-1" },
        max_output_tokens: 300,
        temperature: 0.25,
        top_p: 0.9,
        parallel_tool_calls: false,
        prompt_cache_key: "cache-1",
        safety_identifier: "user-7",
        truncation: "auto" as const,
        service_tier: "default" as const,
        store: false,
        // A field this router does not know: forwarded all the same.
        future_field: { x: [1, 2.5, "three"] },
      };
      const response = await h.openai.responses.create(params as OpenAI.Responses.ResponseCreateParamsNonStreaming);
      const received = fake.requests[0]!;
      expect(received.method).toBe("POST");
      expect(received.path).toBe("/v1/responses");
      expect(received.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
      expect(JSON.parse(received.rawBody)).toEqual({ ...params, model: "gpt-4.1" });
      // The reply is the upstream's, unchanged (its model is the upstream's name).
      expect(response.model).toBe("gpt-4.1");
      expect(response.id).toMatch(/^resp_/);
    });

    it("relays the JSON reply byte for byte", async () => {
      const viaRouter = await h.request("/v1/responses", postJson({ model: "openai/gpt-4.1", input: "bytes please" }));
      const text = await viaRouter.text();
      const stored = fake.stored((JSON.parse(text) as { id: string }).id);
      expect(viaRouter.headers.get("content-type")).toMatch(/^application\/json/);
      expect(JSON.parse(text)).toEqual(stored);
    });

    it("responses.stream() with finalResponse(), events in the real order, no [DONE] added", async () => {
      fake.next({ text: "Bonjour tout le monde", usage: { input_tokens: 11, output_tokens: 4 } });
      const stream = h.openai.responses.stream({ model: "openai/gpt-4.1", input: "Say hello" });
      const types: string[] = [];
      stream.on("event", (event) => types.push(event.type));
      const final = await stream.finalResponse();
      expect(final.output_text).toBe("Bonjour tout le monde");
      expect(types[0]).toBe("response.created");
      expect(types.at(-1)).toBe("response.completed");
      expect(types).toContain("response.output_text.delta");
      expect(JSON.parse(fake.requests[0]!.rawBody)).toEqual({ model: "gpt-4.1", input: "Say hello", stream: true });

      // The raw reply: the same frames the upstream sent, and [DONE] only when it sent one.
      for (const done of [false, true]) {
        fake.next({ text: "a b", done });
        const raw = await (await h.request("/v1/responses", postJson({ model: "openai/gpt-4.1", input: "x", stream: true }))).text();
        expect(raw.startsWith("event: response.created\ndata: ")).toBe(true);
        expect(raw.trimEnd().endsWith("data: [DONE]")).toBe(done);
      }
    });

    it("puts the final usage of a stream and of a JSON reply in the access log", async () => {
      fake.next({ text: "counted", usage: { input_tokens: 13, output_tokens: 2 } });
      await h.openai.responses.stream({ model: "openai/gpt-4.1", input: "count me" }).finalResponse();
      fake.next({ text: "counted", usage: { input_tokens: 17, output_tokens: 3 } });
      await h.openai.responses.create({ model: "openai/gpt-4.1", input: "count me" });
      h.router.logger.flush();
      const access = logLines.filter((line) => line.includes("POST /v1/responses")).map((line) => JSON.parse(line) as Record<string, unknown>);
      const tokens = access.map((entry) => JSON.stringify(entry));
      // Through the fetch handler the log line is written when the Response is handed over, before
      // its stream is read; on a Node server, once the stream has ended.
      if (transport === "http") expect(tokens.some((entry) => entry.includes('"prompt_tokens":13') && entry.includes('"completion_tokens":2'))).toBe(true);
      expect(tokens.some((entry) => entry.includes('"prompt_tokens":17') && entry.includes('"completion_tokens":3'))).toBe(true);
    });

    it("a tool-using agent loop with previous_response_id", async () => {
      const first = await h.openai.responses.create({ model: "openai/gpt-4.1", input: "Weather in Paris? use get_weather", tools: [weatherTool], tool_choice: "required" });
      const call = first.output.find((item) => item.type === "function_call");
      expect(call).toMatchObject({ type: "function_call", name: "get_weather" });
      const second = await h.openai.responses.create({
        model: "openai/gpt-4.1",
        previous_response_id: first.id,
        input: [{ type: "function_call_output", call_id: (call as { call_id: string }).call_id, output: '{"temp":21}' }],
        tools: [weatherTool],
      });
      expect(second.output_text).toContain('{"temp":21}');
      expect(JSON.parse(fake.requests[1]!.rawBody)).toMatchObject({ previous_response_id: first.id, model: "gpt-4.1" });
    });

    it("background: create, retrieve until completed, cancel another; input_items; delete", async () => {
      const queued = await h.openai.responses.create({ model: "openai/gpt-4.1", input: "in the background", background: true });
      expect(queued.status).toBe("queued");
      const seen: string[] = [];
      let polled = await h.openai.responses.retrieve(queued.id);
      seen.push(polled.status!);
      while (polled.status !== "completed" && seen.length < 10) {
        polled = await h.openai.responses.retrieve(queued.id);
        seen.push(polled.status!);
      }
      expect(seen).toEqual(["in_progress", "completed"]);
      expect(polled.output_text).toBe("Echo: in the background");
      expect(fake.requests.filter((r) => r.method === "GET").map((r) => r.path)).toEqual([`/v1/responses/${queued.id}`, `/v1/responses/${queued.id}`]);

      const other = await h.openai.responses.create({ model: "openai/gpt-4.1", input: "cancel me", background: true });
      const cancelled = await h.openai.responses.cancel(other.id);
      expect(cancelled.status).toBe("cancelled");
      const cancelRequest = fake.requests.at(-1)!;
      expect(cancelRequest).toMatchObject({ method: "POST", path: `/v1/responses/${other.id}/cancel` });

      const items = await h.openai.responses.inputItems.list(queued.id, { limit: 1, order: "asc" });
      expect(items.data).toHaveLength(1);
      expect(fake.requests.at(-1)!.path).toBe(`/v1/responses/${queued.id}/input_items?limit=1&order=asc`);

      await h.openai.responses.delete(queued.id);
      expect(fake.requests.at(-1)).toMatchObject({ method: "DELETE", path: `/v1/responses/${queued.id}` });
      const gone = await h.openai.responses.retrieve(queued.id).catch((e: unknown) => e);
      expect(gone).toBeInstanceOf(OpenAI.NotFoundError);
    });

    it("provider errors keep their status in the envelope: 400, 401, 429 with retry-after, 5xx as 502", async () => {
      fake.next({ error: { status: 400, message: "Invalid schema for function 'get_weather'", param: "tools[0].parameters", code: "invalid_function_parameters" } });
      let error = (await h.openai.responses.create({ model: "openai/gpt-4.1", input: "x" }).catch((e: unknown) => e)) as ApiError;
      expect(error.status).toBe(400);
      expect(error.error).toMatchObject({ type: "invalid_request_error", code: "invalid_function_parameters", param: "tools[0].parameters" });
      expect(error.message).toContain("Invalid schema for function");

      fake.next({ error: { status: 429, message: "Rate limit reached", retryAfter: "7" } });
      const limited = await h.request("/v1/responses", postJson({ model: "openai/gpt-4.1", input: "x" }));
      expect(limited.status).toBe(429);
      expect(limited.headers.get("retry-after")).toBe("7");
      expect(await limited.json()).toMatchObject({ error: { type: "rate_limit_error", code: "rate_limit_exceeded" } });

      fake.next({ error: { status: 503, message: "overloaded" } });
      error = (await h.openai.responses.create({ model: "openai/gpt-4.1", input: "x" }).catch((e: unknown) => e)) as ApiError;
      expect(error.status).toBe(502);
      expect(error.error).toMatchObject({ type: "api_error", code: "upstream_error" });

      fake.next({ error: { status: 404, message: "No response found with id 'resp_x'." } });
      const missing = await h.request("/v1/responses/resp_x", { headers: { authorization: `Bearer ${h.openai.apiKey}` } });
      expect(missing.status).toBe(404);
    });

    it("an upstream 401 (bad upstream key) reaches the client as 401 without the key", async () => {
      const other = await startHarness(
        testConfig({ openai: { plugin: "provider-openai", base_url: fake.url, api_key: "sk-wrong-upstream-key-123456", models: ["gpt-4.1"] } }, { responses: { provider: "openai" } }),
        "fetch",
      );
      try {
        const res = await other.request("/v1/responses", postJson({ model: "openai/gpt-4.1", input: "x" }));
        expect(res.status).toBe(401);
        const text = await res.text();
        expect(text).not.toContain("sk-wrong-upstream-key-123456");
      } finally {
        await other.close();
      }
    });

    it("a stream that breaks mid-way ends with one error event; a stalled one with a 504 event", async () => {
      fake.next({ text: "one two three four five", streamFailure: { afterEvents: 4, mode: "destroy" } });
      const broken = await (await h.request("/v1/responses", postJson({ model: "openai/gpt-4.1", input: "x", stream: true }))).text();
      const events = broken.split("\n\n").filter(Boolean);
      expect(events.at(-1)!.startsWith("event: error\ndata: ")).toBe(true);
      expect(events.filter((event) => event.startsWith("event: error"))).toHaveLength(1);
      expect(JSON.parse(events.at(-1)!.split("data: ")[1]!)).toMatchObject({ type: "error", error: { code: "upstream_error" } });

      fake.next({ text: "one two three", streamFailure: { afterEvents: 2, mode: "stall" } });
      const stalled = await (await h.request("/v1/responses", postJson({ model: "openai/gpt-4.1", input: "x", stream: true }))).text();
      expect(JSON.parse(stalled.trimEnd().split("\n\n").at(-1)!.split("data: ")[1]!)).toMatchObject({ error: { code: "upstream_timeout" } });

      // And the SDK surfaces it as an error.
      fake.next({ text: "one two three four", streamFailure: { afterEvents: 3, mode: "destroy" } });
      const failed = await h.openai.responses.stream({ model: "openai/gpt-4.1", input: "x" }).finalResponse().catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(Error);
    });

    it("a stream that ends cleanly before its terminal event is not a success: the SDK's responses.stream() gets the error event", async () => {
      fake.next({ text: "one two three four", streamFailure: { afterEvents: 4, mode: "end" } });
      const seen: string[] = [];
      const stream = h.openai.responses.stream({ model: "openai/gpt-4.1", input: "x" });
      const error = await (async () => {
        for await (const event of stream) seen.push(event.type);
      })().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect((error as ApiError).message).toMatch(/openai: the upstream stream ended before its terminal event \(response\.completed/);
      expect(seen).toHaveLength(4);
      expect(seen).not.toContain("response.completed");
    });

    it("a model of another provider gets 400 with no upstream call", async () => {
      const error = (await h.openai.responses.create({ model: "echo/echo-1", input: "x" }).catch((e: unknown) => e)) as ApiError;
      expect(error.status).toBe(400);
      expect(error.error).toMatchObject({ code: "unsupported_feature", param: "model" });
      expect(fake.requests).toHaveLength(0);
    });

    it("images.generate on gpt-image-1: b64_json as sent, url served by the router", async () => {
      const b64 = await h.openai.images.generate({ model: "openai/gpt-image-1", prompt: "a lighthouse", size: "1024x1024", quality: "low", background: "transparent", output_format: "png" });
      expect(b64.data![0]!.b64_json).toBe(FAKE_PNG_BASE64);
      const sent = JSON.parse(fake.requests[0]!.rawBody) as Record<string, unknown>;
      expect(sent).toEqual({ model: "gpt-image-1", prompt: "a lighthouse", size: "1024x1024", quality: "low", background: "transparent", output_format: "png" });

      const url = await h.openai.images.generate({ model: "openai/gpt-image-1", prompt: "a lighthouse", response_format: "url" });
      // GPT image models refuse response_format: the router asks for base64 and keeps the image.
      expect(JSON.parse(fake.requests[1]!.rawBody)).not.toHaveProperty("response_format");
      const link = url.data![0]!.url!;
      expect(link).toMatch(/\/files\/images\/[\w-]{32}\.png$/);
      const image = await h.request(new URL(link).pathname);
      expect(image.headers.get("content-type")).toBe("image/png");
      expect(Buffer.from(await image.arrayBuffer()).toString("base64")).toBe(FAKE_PNG_BASE64);
    });

    it("images.generate on dall-e-3 passes response_format; fields other models own are refused alike", async () => {
      const viaUrl = await h.openai.images.generate({ model: "openai/dall-e-3", prompt: "a cat", response_format: "url", style: "natural" });
      expect(viaUrl.data![0]!.url!.startsWith(fake.origin)).toBe(true);
      expect(JSON.parse(fake.requests[0]!.rawBody)).toMatchObject({ response_format: "url", style: "natural" });

      const refused: Array<[string, OpenAI.ImageGenerateParams]> = [
        ["style", { model: "openai/gpt-image-1", prompt: "p", style: "vivid" }],
        ["background", { model: "openai/dall-e-3", prompt: "p", background: "transparent" }],
        ["n", { model: "openai/dall-e-3", prompt: "p", n: 2 }],
        ["style", { model: "echo/echo-1", prompt: "p", style: "vivid" }],
      ];
      fake.reset();
      for (const [param, body] of refused) {
        const error = (await h.openai.images.generate(body).catch((e: unknown) => e)) as ApiError;
        expect(error.status).toBe(400);
        expect(error.error).toMatchObject({ code: "unsupported_feature", param });
      }
      // A chat model has no images capability.
      const chat = (await h.openai.images.generate({ model: "openai/gpt-4.1", prompt: "p" }).catch((e: unknown) => e)) as ApiError;
      expect(chat.error).toMatchObject({ code: "unsupported_feature", param: "model" });
      expect(fake.requests).toHaveLength(0);
    });
  });
}

describe("responses stream: a client that goes away", () => {
  it("aborts the upstream request", async () => {
    const fake = await startFakeOpenAIResponses({ apiKey: UPSTREAM_KEY, chunkDelayMs: 300 });
    const h = await startHarness(
      testConfig({ openai: { plugin: "provider-openai", base_url: fake.url, api_key: UPSTREAM_KEY, models: ["gpt-4.1"], timeout: "600s" } }, { responses: { provider: "openai" } }),
      "http",
    );
    try {
      const controller = new AbortController();
      const res = await h.request("/v1/responses", { ...postJson({ model: "openai/gpt-4.1", input: "one two three four five six seven eight", stream: true }), signal: controller.signal });
      const reader = res.body!.getReader();
      await reader.read(); // the first event has arrived
      controller.abort();
      const upstream = await fake.finished(0);
      expect(upstream.aborted).toBe(true);
    } finally {
      await h.close();
      await fake.close();
    }
  });
});
