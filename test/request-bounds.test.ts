/**
 * What a request body can make the router do, through a real router on 127.0.0.1 (and in-process):
 * a body nested deeper than 64 levels is refused with a 400 naming the path before any work (no
 * provider receives it), on every endpoint that takes a JSON body; one at the limit goes through; a
 * body that starts with a UTF-8 byte order mark is read; invalid JSON is refused with where it
 * breaks, never with the client's text; and an image URL serves only under its own extension, with
 * `x-content-type-options: nosniff`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startFakeAnthropic, type FakeAnthropic } from "./fixtures/fake-anthropic.ts";
import { startFakeGemini, type FakeGemini } from "./fixtures/fake-gemini.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./fixtures/fake-openai.ts";
import { startFakeOpenAIResponses, type FakeOpenAIResponses } from "./fixtures/fake-openai-responses.ts";
import { postJson, startHarness, testConfig, TRANSPORTS, type Harness } from "./helpers/harness.ts";

const UPSTREAM_KEY = "sk-upstream-secret-123";
const MAX_BODY_DEPTH = 64;

/** The text of a JSON Schema `{"type":"object","properties":{"a": …}}` that is `levels` objects deep. */
function deepSchema(levels: number): string {
  const pairs = Math.floor((levels - 1) / 2);
  const middle = (levels - 1) % 2 === 1 ? '{"type":"object","properties":{}}' : "{}";
  return '{"type":"object","properties":{"a":'.repeat(pairs) + middle + "}}".repeat(pairs);
}

/** `body` serialised with `deep` (JSON text) put where the string "DEEP" is. */
function withDeep(body: Record<string, unknown>, deep: string): string {
  return JSON.stringify(body).replace('"DEEP"', deep);
}

/** JSON text `{"a":[[…]]}` that is `levels` levels deep: what a string field may carry. */
function deepArrayText(levels: number): string {
  return '{"a":' + "[".repeat(levels - 1) + "]".repeat(levels - 1) + "}";
}

/** A conversation whose assistant turn called `f` with `args`, and whose tool turn answered `result`. */
function toolConversation(model: string, args: string, result: string, stream = false): Record<string, unknown> {
  return {
    model,
    stream,
    messages: [
      { role: "user", content: "hi" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: args } }] },
      { role: "tool", tool_call_id: "call_1", content: result },
    ],
  };
}

interface Envelope {
  error: { message: string; type: string; code: string | null; param: string | null };
}

for (const transport of TRANSPORTS) {
  describe(`request bounds (${transport})`, () => {
    let openai: FakeOpenAI;
    let anthropic: FakeAnthropic;
    let gemini: FakeGemini;
    let responses: FakeOpenAIResponses;
    let h: Harness;

    beforeAll(async () => {
      openai = await startFakeOpenAI({ apiKey: UPSTREAM_KEY });
      anthropic = await startFakeAnthropic();
      gemini = await startFakeGemini();
      responses = await startFakeOpenAIResponses({ apiKey: UPSTREAM_KEY });
      h = await startHarness(
        testConfig(
          {
            openai: { plugin: "provider-openai", base_url: openai.url, api_key: UPSTREAM_KEY, models: ["gpt-4o-mini"] },
            anthropic: { plugin: "provider-anthropic", models: ["claude-sonnet-4-5"], ...anthropic.options },
            gemini: { plugin: "provider-gemini", models: ["gemini-2.5-flash"], ...gemini.options },
            oai: { plugin: "provider-openai", base_url: responses.url, api_key: UPSTREAM_KEY, models: ["gpt-4.1"] },
            echo: { plugin: "provider-echo", models: ["echo-1"] },
          },
          { responses: { provider: "oai" }, storage: { plugin: "storage-unstorage", options: { driver: "memory" } } },
        ),
        transport,
      );
    });
    afterEach(() => {
      openai.reset();
      anthropic.reset();
      gemini.reset();
      responses.reset();
    });
    afterAll(async () => {
      await h.close();
      await Promise.all([openai.close(), anthropic.close(), gemini.close(), responses.close()]);
    });

    async function expectTooDeep(path: string, body: string, paramStart: string): Promise<Envelope> {
      const res = await h.request(path, postJson(body));
      const envelope = (await res.json()) as Envelope;
      expect(res.status, JSON.stringify(envelope)).toBe(400);
      expect(envelope.error).toMatchObject({ type: "invalid_request_error", code: "nesting_too_deep" });
      expect(envelope.error.param!.startsWith(paramStart), envelope.error.param!).toBe(true);
      expect(envelope.error.param!.length).toBeLessThan(200);
      expect(envelope.error.message).toContain(`${MAX_BODY_DEPTH} levels`);
      expect(envelope.error.message.startsWith(envelope.error.param!)).toBe(true);
      return envelope;
    }

    describe("nesting", () => {
      const deep = deepSchema(10_000);
      const paramsDeep = (model: string, stream = false) =>
        withDeep({ model, stream, messages: [{ role: "user", content: "hi" }], tools: [{ type: "function", function: { name: "f", parameters: "DEEP" } }] }, deep);

      it("a 10,000-deep tool schema is a 400 naming tools[0].function.parameters; the provider receives nothing", async () => {
        for (const model of ["openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5"]) {
          for (const stream of [false, true]) await expectTooDeep("/v1/chat/completions", paramsDeep(model, stream), "tools[0].function.parameters.properties.a.properties.a");
        }
        expect(openai.requests).toHaveLength(0);
        expect(anthropic.requests).toHaveLength(0);
      });

      it("responses: a 10,000-deep tool or text.format is a 400 naming it; the provider receives nothing", async () => {
        const tools = withDeep({ model: "oai/gpt-4.1", input: "hi", tools: [{ type: "function", name: "f", parameters: "DEEP" }] }, deep);
        await expectTooDeep("/v1/responses", tools, "tools[0].parameters.properties.a");
        const format = withDeep({ model: "oai/gpt-4.1", input: "hi", stream: true, text: { format: { type: "json_schema", name: "f", schema: "DEEP" } } }, deep);
        await expectTooDeep("/v1/responses", format, "text.format.schema.properties.a");
        expect(responses.requests).toHaveLength(0);
      });

      it("images and metadata updates are checked the same way", async () => {
        await expectTooDeep("/v1/images/generations", withDeep({ model: "echo/echo-1", prompt: "x", user: "DEEP" }, deep), "user.properties.a");
        await expectTooDeep("/v1/chat/completions/chatcmpl-none", withDeep({ metadata: "DEEP" }, deep), "metadata.properties.a");
      });

      it("a 1,000,000-deep array (2 MB, within the body limit), closed or not, is a 400; the router stays up", async () => {
        for (const body of ["[".repeat(1_000_000) + "]".repeat(1_000_000), `{"model":"echo/echo-1","messages":${"[".repeat(1_000_000)}`]) {
          const started = performance.now();
          const res = await h.request("/v1/chat/completions", postJson(body));
          expect(res.status).toBe(400);
          expect(((await res.json()) as Envelope).error.code).toBe("nesting_too_deep");
          expect(performance.now() - started).toBeLessThan(5_000);
        }
        expect((await h.request("/healthz")).status).toBe(200);
        const ok = await h.openai.chat.completions.create({ model: "echo/echo-1", messages: [{ role: "user", content: "still here" }] });
        expect(ok.choices[0]!.message.content).toBe("still here");
      });

      it("a body exactly 64 levels deep goes through to the provider intact", async () => {
        // The body (1), tools (2), the tool (3), function (4): parameters start at level 5.
        const parameters = deepSchema(MAX_BODY_DEPTH - 4);
        for (const model of ["openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5"]) {
          const res = await h.request("/v1/chat/completions", postJson(withDeep({ model, messages: [{ role: "user", content: "hi" }], tools: [{ type: "function", function: { name: "f", parameters: "DEEP" } }] }, parameters)));
          expect(res.status, await res.clone().text()).toBe(200);
        }
        expect(JSON.stringify(openai.requests[0]!.body)).toContain(JSON.stringify(JSON.parse(parameters)));
        expect(anthropic.requests).toHaveLength(1);
        const res = await h.request("/v1/responses", postJson(withDeep({ model: "oai/gpt-4.1", input: "hi", text: { format: { type: "json_schema", name: "f", schema: "DEEP" } } }, deepSchema(MAX_BODY_DEPTH - 3))));
        expect(res.status, await res.clone().text()).toBe(200);
      });
    });

    describe("JSON inside a string field", () => {
      const PROVIDERS = ["anthropic/claude-sonnet-4-5", "gemini/gemini-2.5-flash"];
      const ARGS = "messages[1].tool_calls[0].function.arguments";

      it("a tool call's arguments nested past 64 levels are a 400 naming the field; the provider receives nothing", async () => {
        for (const levels of [MAX_BODY_DEPTH + 1, 10_000, 100_000]) {
          for (const model of PROVIDERS) {
            for (const stream of [false, true]) {
              const envelope = await expectTooDeep("/v1/chat/completions", JSON.stringify(toolConversation(model, deepArrayText(levels), "ok", stream)), ARGS);
              expect(envelope.error.param).toBe(ARGS);
            }
          }
        }
        expect(anthropic.requests).toHaveLength(0);
        expect(gemini.requests).toHaveLength(0);
        expect((await h.request("/healthz")).status).toBe(200);
      });

      it("arguments exactly 64 levels deep reach the provider as the object they are", async () => {
        const args = deepArrayText(MAX_BODY_DEPTH);
        for (const model of PROVIDERS) {
          const res = await h.request("/v1/chat/completions", postJson(toolConversation(model, args, "ok")));
          expect(res.status, await res.clone().text()).toBe(200);
        }
        const sent = JSON.stringify(JSON.parse(args));
        expect(JSON.stringify(anthropic.requests[0]!.body)).toContain(`"input":${sent}`);
        expect(JSON.stringify(gemini.requests[0]!.body)).toContain(`"args":${sent}`);
      });

      it("a tool result of JSON nested past 64 levels reaches the provider as the text it is", async () => {
        for (const levels of [MAX_BODY_DEPTH + 1, 100_000]) {
          const result = deepArrayText(levels);
          for (const model of PROVIDERS) {
            const res = await h.request("/v1/chat/completions", postJson(toolConversation(model, '{"city":"Paris"}', result)));
            expect(res.status, await res.clone().text()).toBe(200);
          }
          const geminiBody = gemini.requests.at(-1)!.body as { contents: { parts: { functionResponse?: { response: Record<string, unknown> } }[] }[] };
          const response = geminiBody.contents.at(-1)!.parts[0]!.functionResponse!.response;
          // Compared as text: a deep value in a failed assertion would be printed level by level.
          expect(Object.keys(response)).toEqual(["result"]);
          expect(response.result === result, "the tool result is sent as its text").toBe(true);
          expect(JSON.stringify(anthropic.requests.at(-1)!.body)).toContain(JSON.stringify(result));
        }
      });
    });

    it("a Gemini image data URL with a broken percent escape is a 400 naming it; the provider receives nothing", async () => {
      const content = [{ type: "text", text: "what is this?" }, { type: "image_url", image_url: { url: "data:image/svg+xml,%E0%A4%A" } }];
      const res = await h.request("/v1/chat/completions", postJson({ model: "gemini/gemini-2.5-flash", messages: [{ role: "user", content }] }));
      const { error } = (await res.json()) as Envelope;
      expect(res.status, JSON.stringify(error)).toBe(400);
      expect(error).toMatchObject({ type: "invalid_request_error", param: "messages[0].content[1].image_url.url" });
      expect(gemini.requests).toHaveLength(0);
    });

    describe("JSON", () => {
      it("a body that starts with a UTF-8 byte order mark is read", async () => {
        const json = JSON.stringify({ model: "echo/echo-1", messages: [{ role: "user", content: "with a BOM" }] });
        const init = postJson("");
        const res = await h.request("/v1/chat/completions", { ...init, body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)]) });
        expect(res.status).toBe(200);
        expect(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe("with a BOM");
        const onlyBom = await h.request("/v1/chat/completions", { ...init, body: Buffer.from([0xef, 0xbb, 0xbf]) });
        expect(((await onlyBom.json()) as Envelope).error.code).toBe("missing_field");
      });

      it("invalid JSON: a 400 that never quotes the body", async () => {
        for (const broken of ['{"model": "hunter2"', '{"model": hunter2}', '["hunter2" "x"]', '{"a": "hunter2\u0001"}', "hunter2"]) {
          const res = await h.request("/v1/chat/completions", postJson(broken));
          const { error } = (await res.json()) as Envelope;
          expect(res.status).toBe(400);
          expect(error).toMatchObject({ type: "invalid_request_error", code: "invalid_json", param: null });
          expect(error.message).not.toContain("hunter2");
        }
      });

      it("invalid JSON: the message says where it breaks, by line and column", async () => {
        const body = '{\n  "model": "echo/echo-1",\n  "messages": [{"role": "user", "content": "my password is hunter2"}], unquoted_secret: 1\n}';
        const { error } = (await (await h.request("/v1/chat/completions", postJson(body))).json()) as Envelope;
        const at = body.indexOf("unquoted");
        const column = at - body.lastIndexOf("\n", at);
        expect(error.message).toBe(`Request body is not valid JSON: expected a property name in double quotes at line 3, column ${column} (character ${at}).`);
        for (const broken of ['{"model": "x"', "[1 2]", '{"a": 01}']) {
          const message = ((await (await h.request("/v1/chat/completions", postJson(broken))).json()) as Envelope).error.message;
          expect(message).toMatch(/^Request body is not valid JSON: .+ at line 1, column \d+ \(character \d+\)\.$/);
        }
      });
    });

    describe("image files", () => {
      /** A URL of a generated PNG, its path. */
      async function imagePath(): Promise<string> {
        const reply = await h.openai.images.generate({ model: "echo/echo-1", prompt: "a lighthouse", response_format: "url" });
        const path = new URL(reply.data![0]!.url!).pathname;
        expect(path.endsWith(".png")).toBe(true);
        return path;
      }

      it("serve only under their own extension: another is a 404, as for an unknown token", async () => {
        const path = await imagePath();
        for (const ext of ["gif", "jpg", "jpeg", "webp", "bin", "html", "PNG"]) {
          const res = await h.request(path.replace(/\.png$/, `.${ext}`));
          expect(res.status, ext).toBe(404);
          expect(((await res.json()) as Envelope).error).toMatchObject({ type: "invalid_request_error", code: "not_found" });
        }
        expect((await h.request(path)).status).toBe(200);
      });

      it("carry x-content-type-options: nosniff and their exact type, on GET and HEAD", async () => {
        const path = await imagePath();
        for (const method of ["GET", "HEAD"]) {
          const image = await h.request(path, { method });
          expect(image.status).toBe(200);
          expect(image.headers.get("content-type")).toBe("image/png");
          expect(image.headers.get("x-content-type-options")).toBe("nosniff");
        }
      });
    });
  });
}
