/**
 * The responses API offline: the openai SDK against `responses.provider: echo`, through the router.
 * The echo provider speaks OpenAI's wire format, so this runs the SDK's own stream helper, the
 * background polling and the forwarded GET/DELETE/cancel/input_items end to end.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRouter } from "@modelmux/core";
import { postJson, silentLogger, startHarness, testConfig, TRANSPORTS, type Harness } from "./helpers/harness.ts";

for (const transport of TRANSPORTS) {
  describe(`responses via provider-echo (${transport})`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await startHarness(
        testConfig(
          { echo: { plugin: "provider-echo", models: ["echo-1"] }, other: { plugin: "provider-echo", models: ["echo-2"] } },
          { responses: { provider: "echo" } },
        ),
        transport,
      );
    });
    afterAll(() => h.close());

    it("create (JSON) echoes the input; the SDK's output_text works", async () => {
      const response = await h.openai.responses.create({ model: "echo/echo-1", input: "Hello, responses", instructions: "Be brief" });
      expect(response).toMatchObject({ object: "response", status: "completed", model: "echo-1", instructions: "Be brief" });
      expect(response.output_text).toBe("Hello, responses");
      expect(response.usage?.output_tokens).toBeGreaterThan(0);
    });

    it("responses.stream().finalResponse() and the raw event order", async () => {
      const stream = h.openai.responses.stream({ model: "echo/echo-1", input: [{ role: "user", content: [{ type: "input_text", text: "stream me please" }] }] });
      const types: string[] = [];
      stream.on("event", (event) => types.push(event.type));
      const final = await stream.finalResponse();
      expect(final.output_text).toBe("stream me please");
      expect(types.slice(0, 4)).toEqual(["response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"]);
      expect(types.filter((type) => type === "response.output_text.delta").length).toBeGreaterThan(1);
      expect(types.slice(-4)).toEqual(["response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"]);
    });

    it("multi-turn through previous_response_id", async () => {
      const first = await h.openai.responses.create({ model: "echo/echo-1", input: "turn one" });
      const second = await h.openai.responses.create({ model: "echo/echo-1", input: "turn two", previous_response_id: first.id });
      expect(second.previous_response_id).toBe(first.id);
      expect(second.output_text).toBe("turn two");
    });

    it("background: create, poll with retrieve until completed; cancel; delete then 404", async () => {
      const queued = await h.openai.responses.create({ model: "echo/echo-1", input: "later", background: true });
      expect(queued.status).toBe("queued");
      let polled = await h.openai.responses.retrieve(queued.id);
      expect(polled.status).toBe("in_progress");
      for (let i = 0; i < 5 && polled.status !== "completed"; i++) polled = await h.openai.responses.retrieve(queued.id);
      expect(polled.status).toBe("completed");
      expect(polled.output_text).toBe("later");

      const other = await h.openai.responses.create({ model: "echo/echo-1", input: "never", background: true });
      const cancelled = await h.openai.responses.cancel(other.id);
      expect(cancelled.status).toBe("cancelled");

      await h.openai.responses.delete(queued.id);
      const gone = await h.openai.responses.retrieve(queued.id).catch((e: unknown) => e);
      expect(gone).toBeInstanceOf(OpenAI.NotFoundError);
    });

    it("a function call streams as function_call_arguments events; its output ends the loop", async () => {
      const tools = [{ type: "function" as const, name: "get_weather", strict: true, parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false } }];
      const stream = h.openai.responses.stream({ model: "echo/echo-1", input: "use get_weather", tools });
      const types: string[] = [];
      stream.on("event", (event) => types.push(event.type));
      const first = await stream.finalResponse();
      const call = first.output[0];
      expect(call).toMatchObject({ type: "function_call", name: "get_weather", arguments: '{"city":"use get_weather"}' });
      expect(types).toContain("response.function_call_arguments.delta");
      expect(types.slice(-3)).toEqual(["response.function_call_arguments.done", "response.output_item.done", "response.completed"]);
      const callId = (call as { call_id: string }).call_id;
      const next = await h.openai.responses.create({ model: "echo/echo-1", previous_response_id: first.id, tools, input: [{ type: "function_call_output", call_id: callId, output: "sunny" }] });
      expect(next.output_text).toBe("Tool get_weather returned: sunny");
    });

    it("a stored response resumes as events: responses.stream({ response_id }) and retrieve with stream: true", async () => {
      const created = await h.openai.responses.create({ model: "echo/echo-1", input: "resume this", background: true });
      const resumed = h.openai.responses.stream({ response_id: created.id, starting_after: 1 });
      const types: string[] = [];
      resumed.on("event", (event) => types.push(event.type));
      expect((await resumed.finalResponse()).output_text).toBe("resume this");
      expect(types[0]).toBe("response.output_item.added");
      expect(types.at(-1)).toBe("response.completed");
      const raw = await h.openai.responses.retrieve(created.id, { stream: true });
      const sequence: number[] = [];
      for await (const event of raw) sequence.push(event.sequence_number);
      expect(sequence).toEqual(sequence.map((_, i) => i));
    });

    it("input_items lists the input with the forwarded query", async () => {
      const response = await h.openai.responses.create({
        model: "echo/echo-1",
        input: [
          { role: "user", content: "a" },
          { role: "assistant", content: "b" },
          { role: "user", content: "c" },
        ],
      });
      const page = await h.openai.responses.inputItems.list(response.id, { order: "asc", limit: 2 });
      expect(page.data).toHaveLength(2);
      expect(page.has_more).toBe(true);
      const all: string[] = [];
      for await (const item of h.openai.responses.inputItems.list(response.id, { order: "asc", limit: 2 })) all.push((item as { role: string }).role);
      expect(all).toEqual(["user", "assistant", "user"]);
    });

    it("a model of another provider gets 400 unsupported_feature, before any provider call", async () => {
      const error = await h.openai.responses.create({ model: "other/echo-2", input: "x" }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: "unsupported_feature", param: "model" });
    });

    it("validates the interface's fields and limits, naming the field", async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ input: "x" }, "model"],
        [{ model: "echo/echo-1", temperature: 3 }, "temperature"],
        [{ model: "echo/echo-1", max_output_tokens: -1 }, "max_output_tokens"],
        [{ model: "echo/echo-1", tool_choice: "sometimes" }, "tool_choice"],
        [{ model: "echo/echo-1", tools: [{ type: "function" }] }, "tools[0].name"],
        [{ model: "echo/echo-1", stream: "yes" }, "stream"],
      ];
      for (const [body, param] of cases) {
        const res = await h.request("/v1/responses", postJson(body));
        expect(res.status, JSON.stringify(body)).toBe(400);
        const { error } = (await res.json()) as { error: { param: string; message: string } };
        expect(error.param, JSON.stringify(body)).toBe(param);
      }
    });

    it("an unknown response id is the provider's 404 in the envelope; unknown methods are 405", async () => {
      const res = await h.request("/v1/responses/resp_nope", { headers: { authorization: `Bearer ${h.openai.apiKey}` } });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: { type: "invalid_request_error", message: expect.stringContaining("resp_nope") } });
      const put = await h.request("/v1/responses/resp_nope", { method: "PUT", headers: { authorization: `Bearer ${h.openai.apiKey}` } });
      expect(put.status).toBe(405);
      expect(put.headers.get("allow")).toBe("GET, DELETE");
    });

    it("needs an API key", async () => {
      const res = await h.request("/v1/responses", { ...postJson({ model: "echo/echo-1", input: "x" }), headers: { "content-type": "application/json" } });
      expect(res.status).toBe(401);
    });
  });
}

describe("responses API off", () => {
  it("without responses.provider the endpoints say how to turn it on", async () => {
    const h = await startHarness(testConfig({ echo: { plugin: "provider-echo", models: ["echo-1"] } }), "fetch");
    try {
      const res = await h.request("/v1/responses", postJson({ model: "echo/echo-1", input: "x" }));
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: { message: string } }).error.message).toContain("responses.provider");
    } finally {
      await h.close();
    }
  });

  it("a responses.provider that names no configured provider stops the start, naming the key", async () => {
    const config = testConfig({ echo: { plugin: "provider-echo", models: ["echo-1"] } }, { responses: { provider: "opnai" } });
    await expect(createRouter(config, { logger: silentLogger() })).rejects.toThrow(/responses\.provider: 'opnai' is not a configured provider/);
  });

  it("a responses provider skipped for a missing variable leaves the API off and says why", async () => {
    const h = await startHarness(
      testConfig(
        { echo: { plugin: "provider-echo", models: ["echo-1"] }, openai: { plugin: "provider-openai", requires_env: ["MODELMUX_TEST_UNSET_KEY"], models: ["gpt-4.1"] } },
        { responses: { provider: "openai" } },
      ),
      "fetch",
      { env: {} },
    );
    try {
      const res = await h.request("/v1/responses", postJson({ model: "echo/echo-1", input: "x" }));
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: { message: string } }).error.message).toContain("requires MODELMUX_TEST_UNSET_KEY");
    } finally {
      await h.close();
    }
  });
});
