/**
 * What a request can make the echo provider (served by the default config) generate, through a real
 * router and the official openai SDK: schemas that ask for millions of items, huge strings, deep
 * nesting or thousands of properties, long messages, many choices and many tools all get a small
 * reply, JSON or streamed, on chat completions and the Responses API; and the router keeps
 * answering `/healthz` meanwhile.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postJson, startHarness, testConfig, TRANSPORTS, type Harness } from "./helpers/harness.ts";

const MODEL = "echo/echo-1";
/** The echo's bounds (plugins/provider-echo/README.md, "Bounds"). */
const MAX_TEXT_CHARS = 16_384;
const MAX_STREAM_PIECES = 1_024;
/** Far above what any bounded reply takes, far below what an unbounded one took (60 MB and more). */
const SMALL = 256 * 1024;
/** /healthz must answer while the echo works; generous, so that a loaded machine does not fail it. */
const HEALTHZ_MS = 2_000;

const HUGE_ARRAY = { type: "array", minItems: 10_000_000, items: { type: "string" } };
const hugeFormat = (schema: Record<string, unknown>) => ({ type: "json_schema" as const, json_schema: { name: "huge", schema } });

/** A schema of `levels` nested required objects. */
function deepRequired(levels: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: "string" };
  for (let i = 0; i < levels; i++) schema = { type: "object", properties: { a: schema }, required: ["a"] };
  return schema;
}

for (const transport of TRANSPORTS) {
  describe(`echo bounds (${transport})`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await startHarness(testConfig({ echo: { plugin: "provider-echo", models: ["echo-1"] } }, { responses: { provider: "echo" } }), transport);
    });
    afterAll(() => h.close());

    /**
     * Starts `work` and asks `/healthz` again and again while it runs (a bounded number of times):
     * every answer must come quickly, so the echo never blocked the router for long.
     */
    async function whileHealthy<T>(work: () => Promise<T>): Promise<T> {
      let done = false;
      const pending = work().finally(() => {
        done = true;
      });
      let slowest = 0;
      for (let i = 0; i < 500 && !done; i++) {
        const started = performance.now();
        const health = await h.request("/healthz");
        expect(health.status).toBe(200);
        await health.arrayBuffer();
        slowest = Math.max(slowest, performance.now() - started);
      }
      const result = await pending;
      expect(slowest).toBeLessThan(HEALTHZ_MS);
      return result;
    }

    /** A raw streamed request: its bytes and its `data:` events. */
    async function rawStream(path: string, body: Record<string, unknown>): Promise<{ bytes: number; events: string[] }> {
      const res = await h.request(path, postJson({ ...body, stream: true }));
      expect(res.status).toBe(200);
      const text = await res.text();
      return { bytes: Buffer.byteLength(text), events: text.split("\n\n").filter((block) => block.includes("data: ")) };
    }

    it("response_format asking for 10,000,000 items: a small reply, JSON and streamed", async () => {
      const schema = { type: "object", properties: { items: HUGE_ARRAY }, required: ["items"] };
      const messages = [{ role: "user" as const, content: "hi" }];
      const reply = await whileHealthy(() => h.openai.chat.completions.create({ model: MODEL, messages, response_format: hugeFormat(schema) }));
      const content = reply.choices[0]!.message.content!;
      expect(content.length).toBeLessThan(SMALL);
      const value = JSON.parse(content) as { items: string[] };
      expect(value.items.length).toBeGreaterThan(0);
      expect(value.items.length).toBeLessThanOrEqual(8);
      expect(value.items[0]).toBe("hi");

      const stream = await whileHealthy(() => rawStream("/v1/chat/completions", { model: MODEL, messages, response_format: hugeFormat(schema) }));
      expect(stream.bytes).toBeLessThan(SMALL);
      const streamed = await h.openai.chat.completions.stream({ model: MODEL, messages, response_format: hugeFormat(schema) }).finalChatCompletion();
      expect(streamed.choices[0]!.message.content).toBe(content);
    }, 60_000);

    it("huge minLength, deep schemas and 100,000 required properties: small replies", async () => {
      const required = Array.from({ length: 100_000 }, (_, i) => `p${i}`);
      const schemas = [
        { type: "object", properties: { s: { type: "string", minLength: 100_000_000 } }, required: ["s"] },
        deepRequired(28),
        { type: "object", required },
        { type: "object", properties: { rows: { type: "array", minItems: 100, items: { type: "object", required } } }, required: ["rows"] },
      ];
      for (const schema of schemas) {
        const messages = [{ role: "user" as const, content: "hi" }];
        const reply = await whileHealthy(() => h.openai.chat.completions.create({ model: MODEL, messages, response_format: hugeFormat(schema) }));
        const content = reply.choices[0]!.message.content!;
        expect(content.length).toBeLessThan(SMALL);
        expect(() => JSON.parse(content)).not.toThrow();
        const stream = await whileHealthy(() => rawStream("/v1/chat/completions", { model: MODEL, messages, response_format: hugeFormat(schema) }));
        expect(stream.bytes).toBeLessThan(SMALL);
      }
    }, 60_000);

    it("a $ref with broken percent-encoding, in a tool's parameters or a response_format, is unresolved: a 200 whose value is the text", async () => {
      const messages = [{ role: "user" as const, content: "Paris" }];
      for (const ref of ["#/%E0%A4%A", "#/%", "#/$defs/%ED%A0%80"]) {
        const schema = { type: "object", $defs: { a: { type: "integer" } }, properties: { city: { $ref: ref } }, required: ["city"] };
        const reply = await h.openai.chat.completions.create({ model: MODEL, messages, response_format: hugeFormat(schema) });
        expect(JSON.parse(reply.choices[0]!.message.content!)).toEqual({ city: "Paris" });
        const tools = [{ type: "function" as const, function: { name: "lookup", parameters: schema } }];
        const called = await h.openai.chat.completions.create({ model: MODEL, messages, tools, tool_choice: "required" });
        const call = called.choices[0]!.message.tool_calls![0]!;
        expect(JSON.parse(call.type === "function" ? call.function.arguments : "")).toEqual({ city: "Paris" });
        const streamed = await h.openai.chat.completions.stream({ model: MODEL, messages, tools, tool_choice: "required" }).finalChatCompletion();
        const streamedCall = streamed.choices[0]!.message.tool_calls![0]!;
        expect(streamedCall.function.arguments).toBe(call.type === "function" ? call.function.arguments : "");
        const root = await h.openai.chat.completions.create({ model: MODEL, messages, response_format: hugeFormat({ $ref: ref }) });
        expect(JSON.parse(root.choices[0]!.message.content!)).toBe("Paris");
      }
    });

    it("a tool schema asking for 10,000,000 items: small tool-call arguments, JSON and streamed", async () => {
      const tools = [{ type: "function" as const, function: { name: "fill", parameters: { type: "object", properties: { rows: HUGE_ARRAY }, required: ["rows"] } } }];
      const request = { model: MODEL, messages: [{ role: "user" as const, content: "fill it" }], tools, tool_choice: "required" as const };
      const reply = await whileHealthy(() => h.openai.chat.completions.create(request));
      const call = reply.choices[0]!.message.tool_calls![0]!;
      expect(call.type === "function" && call.function.arguments.length).toBeLessThan(SMALL);
      const args = JSON.parse(call.type === "function" ? call.function.arguments : "{}") as { rows: string[] };
      expect(args.rows.length).toBeLessThanOrEqual(8);

      const stream = await whileHealthy(() => rawStream("/v1/chat/completions", request));
      expect(stream.bytes).toBeLessThan(SMALL);
    }, 60_000);

    it("a 1 MB message is echoed up to 16,384 characters (finish_reason length), in at most 1,024 streamed pieces", async () => {
      const text = "abcd".repeat(250_000);
      const messages = [{ role: "user" as const, content: text }];
      const reply = await whileHealthy(() => h.openai.chat.completions.create({ model: MODEL, messages }));
      expect(reply.choices[0]).toMatchObject({ finish_reason: "length", message: { content: text.slice(0, MAX_TEXT_CHARS) } });
      expect(reply.usage!.completion_tokens).toBe(MAX_TEXT_CHARS / 4);

      const stream = await whileHealthy(() => rawStream("/v1/chat/completions", { model: MODEL, messages }));
      // Pieces, plus the role, finish and usage chunks and [DONE].
      expect(stream.events.length).toBeLessThanOrEqual(MAX_STREAM_PIECES + 4);
      const streamed = await h.openai.chat.completions.stream({ model: MODEL, messages }).finalChatCompletion();
      expect(streamed.choices[0]).toMatchObject({ finish_reason: "length", message: { content: text.slice(0, MAX_TEXT_CHARS) } });
    }, 60_000);

    it("n: 128 copies of a long message share one budget", async () => {
      const messages = [{ role: "user" as const, content: "x".repeat(200_000) }];
      const res = await whileHealthy(() => h.request("/v1/chat/completions", postJson({ model: MODEL, messages, n: 128 })));
      const body = await res.text();
      expect(res.status).toBe(200);
      expect(body.length).toBeLessThan(SMALL);
      const reply = JSON.parse(body) as { choices: { message: { content: string }; finish_reason: string }[] };
      expect(reply.choices).toHaveLength(128);
      expect(reply.choices[127]).toMatchObject({ finish_reason: "length", message: { content: "x".repeat(1024) } });
      const stream = await whileHealthy(() => rawStream("/v1/chat/completions", { model: MODEL, messages, n: 128 }));
      // 128 role and finish chunks on top of the pieces: each event's envelope weighs more than its text.
      expect(stream.bytes).toBeLessThan(4 * SMALL);
      expect(stream.events.length).toBeLessThanOrEqual(MAX_STREAM_PIECES + 2 * 128 + 2);
    }, 60_000);

    it("20,000 tools and a long message: the mentioned tool is found in one pass", async () => {
      const tools = Array.from({ length: 20_000 }, (_, i) => ({ type: "function" as const, function: { name: `tool_${i}` } }));
      const content = `${"please do nothing at all ".repeat(20_000)}then call TOOL_19999.`;
      const reply = await whileHealthy(() => h.openai.chat.completions.create({ model: MODEL, messages: [{ role: "user", content }], tools }));
      const call = reply.choices[0]!.message.tool_calls![0]!;
      expect(call.type === "function" && call.function.name).toBe("tool_19999");
    }, 60_000);

    it("Responses API: a long input is echoed up to 16,384 characters (incomplete), streamed in at most 1,024 deltas; text.format stays small", async () => {
      const input = "abcd".repeat(250_000);
      const reply = await whileHealthy(() => h.openai.responses.create({ model: MODEL, input }));
      expect(reply.status).toBe("incomplete");
      expect(reply.incomplete_details).toEqual({ reason: "max_output_tokens" });
      expect(reply.output_text).toBe(input.slice(0, MAX_TEXT_CHARS));

      const stream = await whileHealthy(() => rawStream("/v1/responses", { model: MODEL, input }));
      expect(stream.events.filter((event) => event.includes("response.output_text.delta")).length).toBeLessThanOrEqual(MAX_STREAM_PIECES);
      const final = await h.openai.responses.stream({ model: MODEL, input }).finalResponse();
      expect(final.output_text).toBe(input.slice(0, MAX_TEXT_CHARS));

      const text = { format: { type: "json_schema" as const, name: "huge", schema: { type: "object", properties: { items: HUGE_ARRAY }, required: ["items"] } } };
      const formatted = await whileHealthy(() => h.request("/v1/responses", postJson({ model: MODEL, input: "hi", text })));
      expect((await formatted.text()).length).toBeLessThan(SMALL);
      const formattedStream = await whileHealthy(() => rawStream("/v1/responses", { model: MODEL, input: "hi", text }));
      expect(formattedStream.bytes).toBeLessThan(SMALL);
    }, 60_000);
  });
}
