/**
 * Every endpoint's real replies against the router's own `GET /openapi.json` (docs/interface.md,
 * "OpenAPI description"): JSON and streams, successes and errors, on the echo provider and on an
 * OpenAI-shaped upstream on 127.0.0.1 (the chaos upstream, for 502, 504 and a stream's error event).
 * Each body, and each `data:` event of a stream, is validated against the schema the document
 * declares for that path, method and status; a reply that drifts from the document fails here.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ModelmuxConfig } from "@modelmux/core";
import { CHAOS_ERRORS, startChaosUpstream, type ChaosUpstream } from "./helpers/chaos-upstream.ts";
import { postJson, startHarness, TEST_KEY, testConfig, TRANSPORTS, type Harness } from "./helpers/harness.ts";
import { declaredReply, documentAjv, errorsOf, pointer, sseData, templateOf, type OpenApiDocument } from "./helpers/openapi-check.ts";

const ECHO = "echo/echo-1";
const CHAOS = "chaos/gpt-4o";
/** The same upstream with a short timeout, for the 504. */
const LATE = "late/gpt-4o";
const AUTH = { authorization: `Bearer ${TEST_KEY}` };
const ADMIN_KEY = "sk-openapi-admin-0123456789";
const ADMIN = { authorization: `Bearer ${ADMIN_KEY}` };
const hello = { model: ECHO, messages: [{ role: "user", content: "Hello, document" }] };

function config(upstream: ChaosUpstream): ModelmuxConfig {
  const openai = { plugin: "provider-openai", base_url: upstream.openaiBaseUrl, api_key: "sk-chaos", models: ["gpt-4o"] };
  return testConfig(
    {
      echo: { plugin: "provider-echo", models: ["echo-1"] },
      chaos: { ...openai, timeout: "10s" },
      late: { ...openai, timeout: "300ms" },
    },
    {
      // An admin key, for the admin endpoints.
      auth: {
        api_keys: [
          { key: TEST_KEY, app: "test-app", developer: "tester" },
          { key: ADMIN_KEY, app: "ops", developer: "root", admin: true },
        ],
      },
      pricing: { [ECHO]: { input: 1, output: 2 } },
      storage: { plugin: "storage-unstorage", options: { driver: "memory" } },
      responses: { provider: "echo" },
      // A token limit no request reaches, but one reservation over it: the 429.
      rate_limit: { app: { requests: 100_000, tokens: 1_000_000, window: "60s" } },
      // No retries: one scripted failure is one reply.
      routing: { retry: { attempts: 0 } },
      server: { body_limit: "64kb" },
    },
  );
}

interface Checked {
  status: number;
  body: unknown;
  events: unknown[];
  headers: Headers;
}

for (const transport of TRANSPORTS) {
  describe(`replies match /openapi.json (${transport})`, () => {
    let upstream: ChaosUpstream;
    let h: Harness;
    let document: OpenApiDocument;
    let ajv: ReturnType<typeof documentAjv>;
    /** `METHOD template status` of every reply checked. */
    const seen = new Set<string>();

    beforeAll(async () => {
      upstream = await startChaosUpstream({ name: "chaos" });
      h = await startHarness(config(upstream), transport);
      const res = await h.request("/openapi.json");
      document = (await res.json()) as OpenApiDocument;
      ajv = documentAjv(document);
    });
    afterAll(async () => {
      await h?.close();
      await upstream?.close();
    });

    /** Sends a request and checks its reply against the document; `expected` is the status it must have. */
    async function check(path: string, init: RequestInit, expected: number): Promise<Checked> {
      const method = init.method ?? "GET";
      const res = await h.request(path, init);
      const text = await res.text();
      const what = `${method} ${path} → ${res.status} ${text.slice(0, 300)}`;
      expect(res.status, what).toBe(expected);
      const declared = declaredReply(document, new URL(path, "http://router.test").pathname, method, res.status);
      if (typeof declared === "string") expect.fail(declared);
      expect(res.headers.get("x-request-id"), what).toMatch(/\S/);
      seen.add(`${method} ${templateOf(document, new URL(path, "http://router.test").pathname) ?? "?"} ${res.status}`);
      const checked: Checked = { status: res.status, body: undefined, events: [], headers: res.headers };
      const content = declared.reply.content as Record<string, unknown> | undefined;
      if (method === "HEAD" || !content) {
        expect(text, what).toBe("");
        return checked;
      }
      const mediaType = (res.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
      expect(Object.keys(content), what).toContain(mediaType);
      // An image: its media type is all the document says of it.
      if (!(content[mediaType] as { schema?: unknown }).schema) return checked;
      const validate = ajv.at(pointer(...declared.at, "content", mediaType, "schema"));
      const valid = (value: unknown, label: string) => expect(validate(value), `${label}: ${errorsOf(validate)}\n${what}`).toBe(true);
      if (mediaType === "application/json") {
        checked.body = JSON.parse(text);
        valid(checked.body, "body");
      } else if (mediaType === "text/event-stream") {
        checked.events = sseData(text).map((data) => JSON.parse(data) as unknown);
        expect(checked.events.length, what).toBeGreaterThan(0);
        checked.events.forEach((event, i) => valid(event, `event ${i}`));
      }
      return checked;
    }

    /** The request body schema the document declares for a POST must say the same as the router: accepted or refused. */
    function requestSchemaOf(template: string) {
      return ajv.at(pointer("paths", template, "post", "requestBody", "content", "application/json", "schema"));
    }

    const get = (path: string, expected: number, headers: Record<string, string> = AUTH) => check(path, { headers }, expected);
    const head = (path: string, expected: number, headers: Record<string, string> = AUTH) => check(path, { method: "HEAD", headers }, expected);
    const post = (path: string, body: unknown, expected: number) => check(path, postJson(body), expected);

    it("serves itself without a key, as JSON, and /healthz and /readyz", async () => {
      const doc = await get("/openapi.json", 200, {});
      expect(doc.headers.get("content-type")).toMatch(/^application\/json/);
      expect(doc.body).toMatchObject({ openapi: "3.1.0", info: { version: "0.1.0" } });
      await head("/openapi.json", 200, {});
      await get("/healthz", 200, {});
      await head("/healthz", 200, {});
      await get("/readyz", 200, {});
      await head("/readyz", 200, {});
    });

    it("the models list, and 401 without a key", async () => {
      const list = await get("/v1/models", 200);
      expect((list.body as { data: unknown[] }).data.length).toBe(3);
      await head("/v1/models", 200);
      await get("/v1/models", 401, {});
      await get("/v1/models", 401, { authorization: "Bearer sk-wrong" });
    });

    it("one model, as the SDK's models.retrieve asks for it, and its errors", async () => {
      const one = await get("/v1/models/echo%2Fecho-1", 200);
      expect(one.body).toMatchObject({ id: ECHO, modelmux_kind: "model" });
      await head("/v1/models/echo%2Fecho-1", 200);
      await get("/v1/models/nobody%2Fnothing", 404);
      await get("/v1/models/%E0%A4%A", 400);
      await get("/v1/models/echo%2Fecho-1", 401, {});
    });

    it("chat completions, JSON and streamed, from the echo and from an OpenAI-shaped upstream", async () => {
      const validBody = requestSchemaOf("/v1/chat/completions");
      const requests: Array<Record<string, unknown>> = [
        { ...hello, store: true, metadata: { suite: "openapi" } },
        { ...hello, n: 2, temperature: 0.5 },
        { ...hello, messages: [{ role: "user", content: "call lookup" }], tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }] },
        { ...hello, stream: true, stream_options: { include_usage: true }, store: true },
        { ...hello, stream: true, n: 2 },
        { ...hello, model: CHAOS, service_tier: "default" },
        { ...hello, model: CHAOS, stream: true, stream_options: { include_usage: true } },
      ];
      for (const request of requests) {
        expect(validBody(request), errorsOf(validBody)).toBe(true);
        const reply = await post("/v1/chat/completions", request, 200);
        if (request.stream === true) expect(reply.events.length).toBeGreaterThan(1);
        else expect(reply.body).toMatchObject({ object: "chat.completion" });
      }
    });

    it("chat errors: 400, 401, 404, 413, 415, 429, 502, 504 and a stream's error event", async () => {
      const validBody = requestSchemaOf("/v1/chat/completions");
      // Refused by the router and by the document's schema alike.
      for (const bad of [{ ...hello, temperature: 5 }, { ...hello, colour: "blue" }, { model: ECHO, messages: [] }]) {
        expect(validBody(bad)).toBe(false);
        await post("/v1/chat/completions", bad, 400);
      }
      // A rule between fields, which the request body's description lists.
      await post("/v1/chat/completions", { ...hello, top_logprobs: 2 }, 400);
      await check("/v1/chat/completions", postJson("{ not json"), 400);
      await check("/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(hello) }, 401);
      await post("/v1/chat/completions", { ...hello, model: "nobody/nothing" }, 404);
      await post("/v1/chat/completions", { ...hello, messages: [{ role: "user", content: "x".repeat(70_000) }] }, 413);
      await check("/v1/chat/completions", { method: "POST", headers: { ...AUTH, "content-type": "text/plain" }, body: JSON.stringify(hello) }, 415);
      await post("/v1/chat/completions", { ...hello, max_completion_tokens: 2_000_000 }, 429);
      upstream.script(CHAOS_ERRORS.serverError);
      await post("/v1/chat/completions", { ...hello, model: CHAOS }, 502);
      upstream.script("hang");
      await post("/v1/chat/completions", { ...hello, model: LATE }, 504);
      upstream.script({ malformedAfter: 2, then: "end" });
      const broken = await post("/v1/chat/completions", { ...hello, model: CHAOS, stream: true }, 200);
      expect(broken.events.at(-1)).toMatchObject({ error: { type: "api_error", code: "upstream_error" } });
    });

    it("stored completions: list, get, update, messages, delete, and their errors", async () => {
      const stored = await post("/v1/chat/completions", { ...hello, store: true, metadata: { suite: "stored" } }, 200);
      const id = (stored.body as { id: string }).id;
      const list = await get("/v1/chat/completions?limit=2&order=desc&metadata[suite]=stored", 200);
      expect((list.body as { data: Array<{ id: string }> }).data[0]!.id).toBe(id);
      await get(`/v1/chat/completions?model=${encodeURIComponent(ECHO)}&limit=0`, 200);
      await head("/v1/chat/completions", 200);
      await get(`/v1/chat/completions/${id}`, 200);
      await head(`/v1/chat/completions/${id}`, 200);
      const update = { metadata: { suite: "stored", step: "updated" } };
      expect(requestSchemaOf("/v1/chat/completions/{completion_id}")(update)).toBe(true);
      await post(`/v1/chat/completions/${id}`, update, 200);
      await post(`/v1/chat/completions/${id}`, { metadata: null }, 200);
      const messages = await get(`/v1/chat/completions/${id}/messages?limit=5`, 200);
      expect((messages.body as { data: unknown[] }).data).toHaveLength(1);
      await head(`/v1/chat/completions/${id}/messages`, 200);

      await get("/v1/chat/completions?limit=101", 400);
      await get("/v1/chat/completions?colour=blue", 400);
      await get("/v1/chat/completions?after=chatcmpl-unknown", 400);
      await get(`/v1/chat/completions/${id}/messages?order=sideways`, 400);
      await get("/v1/chat/completions/%E0%A4%A", 400);
      await post(`/v1/chat/completions/${id}`, { metadata: {}, extra: 1 }, 400);
      await check(`/v1/chat/completions/${id}`, { method: "POST", headers: { ...AUTH, "content-type": "text/plain" }, body: "{}" }, 415);
      await get("/v1/chat/completions", 401, {});
      for (const path of ["/v1/chat/completions/chatcmpl-unknown", "/v1/chat/completions/chatcmpl-unknown/messages"]) await get(path, 404);
      await post("/v1/chat/completions/chatcmpl-unknown", update, 404);

      await check(`/v1/chat/completions/${id}`, { method: "DELETE", headers: AUTH }, 200);
      await check(`/v1/chat/completions/${id}`, { method: "DELETE", headers: AUTH }, 404);
    });

    it("the responses API: create, stream, poll, input items, cancel, delete, and its errors", async () => {
      const validBody = requestSchemaOf("/v1/responses");
      const create = { model: ECHO, input: "Hello, responses", instructions: "Be brief" };
      expect(validBody(create)).toBe(true);
      const created = await post("/v1/responses", create, 200);
      const id = (created.body as { id: string }).id;
      await post("/v1/responses", { ...create, stream: true }, 200);
      await get(`/v1/responses/${id}`, 200);
      await get(`/v1/responses/${id}/input_items?limit=10`, 200);
      const queued = await post("/v1/responses", { ...create, background: true }, 200);
      const queuedId = (queued.body as { id: string }).id;
      await check(`/v1/responses/${queuedId}/cancel`, { method: "POST", headers: AUTH }, 200);
      await check(`/v1/responses/${id}`, { method: "DELETE", headers: AUTH }, 200);

      expect(validBody({ ...create, temperature: 3 })).toBe(false);
      await post("/v1/responses", { ...create, temperature: 3 }, 400);
      await post("/v1/responses", { ...create, model: CHAOS }, 400);
      await post("/v1/responses", { ...create, model: "nobody/nothing" }, 404);
      await get(`/v1/responses/${id}`, 404);
      await get(`/v1/responses/${id}/input_items`, 404);
      await check(`/v1/responses/${id}`, { method: "DELETE", headers: AUTH }, 404);
      await check(`/v1/responses/${id}/cancel`, { method: "POST", headers: AUTH }, 404);
      await get(`/v1/responses/${id}`, 401, {});
      await check("/v1/responses", { method: "PUT", headers: AUTH }, 405);
    });

    it("images: base64 and URLs, the image files, and their errors", async () => {
      const validBody = requestSchemaOf("/v1/images/generations");
      const request = { model: ECHO, prompt: "a red fox", n: 2, response_format: "b64_json" };
      expect(validBody(request)).toBe(true);
      await post("/v1/images/generations", request, 200);
      const urls = await post("/v1/images/generations", { ...request, n: 1, response_format: "url" }, 200);
      const file = new URL((urls.body as { data: Array<{ url: string }> }).data[0]!.url).pathname;
      const image = await get(file, 200, {});
      expect(image.headers.get("content-type")).toBe("image/png");
      await head(file, 200, {});

      expect(validBody({ ...request, colour: "red" })).toBe(false);
      await post("/v1/images/generations", { ...request, colour: "red" }, 400);
      await post("/v1/images/generations", { ...request, model: "nobody/nothing" }, 404);
      await check("/v1/images/generations", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(request) }, 401);
      await get(file.replace(/\.png$/, ".gif"), 404, {});
      await get("/files/images/%E0%A4%A", 400, {});
    });

    it("the metrics: Prometheus text for an admin key, 401 without a key, 403 for another key", async () => {
      const metrics = await get("/metrics", 200, ADMIN);
      expect(metrics.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
      await head("/metrics", 200, ADMIN);
      await get("/metrics", 401, {});
      await get("/metrics", 403);
      await head("/metrics", 403);
    });

    it("usage counters: per day, hour and in all, grouped; 400, 401, and 403 to a key that is not an admin key", async () => {
      await post("/v1/chat/completions", hello, 200);
      const grouped = await get("/v1/usage?group_by=app,developer,model", 200, ADMIN);
      expect((grouped.body as { data: unknown[] }).data).toContainEqual(expect.objectContaining({ app: "test-app", developer: "tester", model: ECHO }));
      await get("/v1/usage?interval=hour&group_by=provider", 200, ADMIN);
      await get("/v1/usage?start=2026-01-01&end=2026-01-31&interval=total", 200, ADMIN);
      await head("/v1/usage", 200, ADMIN);
      await get("/v1/usage?start=2026-02-30", 400, ADMIN);
      await get("/v1/usage?group_by=colour", 400, ADMIN);
      await get("/v1/usage", 401, {});
      await get("/v1/usage", 403);
    });

    it("the status page without a key, its figures with an admin key only: 401, 403", async () => {
      const page = await get("/ui", 200, {});
      expect(page.headers.get("content-type")).toMatch(/^text\/html/);
      await head("/ui", 200, {});
      // After the suites above: rate-limit counters, targets and errors to describe.
      const status = await get("/ui/status.json", 200, ADMIN);
      expect(status.body).toMatchObject({ ranges: { hour: { usage: { scope: "router" } } }, rate_limits: { latest: expect.arrayContaining([expect.objectContaining({ key: "app:test-app" })]) } });
      await head("/ui/status.json", 200, ADMIN);
      await get("/ui/status.json", 401, {});
      await get("/ui/status.json", 403, AUTH);
    });

    it("embeddings: numbers and base64, and their errors", async () => {
      const validBody = requestSchemaOf("/v1/embeddings");
      const request = { model: ECHO, input: ["a red fox", "a grey wolf"], dimensions: 16 };
      expect(validBody(request)).toBe(true);
      const floats = await post("/v1/embeddings", request, 200);
      expect((floats.body as { data: Array<{ embedding: number[] }> }).data[1]!.embedding).toHaveLength(16);
      const base64 = await post("/v1/embeddings", { ...request, input: [[1, 2, 3]], encoding_format: "base64" }, 200);
      expect(typeof (base64.body as { data: Array<{ embedding: unknown }> }).data[0]!.embedding).toBe("string");

      expect(validBody({ ...request, input: [] })).toBe(false);
      await post("/v1/embeddings", { ...request, input: [] }, 400);
      // gpt-4o has no `embeddings`.
      await post("/v1/embeddings", { ...request, model: CHAOS }, 400);
      await post("/v1/embeddings", { ...request, model: "nobody/nothing" }, 404);
      await check("/v1/embeddings", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(request) }, 401);
    });

    it("unknown paths are 404 and unknown methods 405, in the envelope", async () => {
      await get("/v1/nothing-here", 404);
      await get("/nothing-here", 404, {});
      await check("/v1/models", { method: "PUT", headers: AUTH }, 405);
      await check("/healthz", { method: "DELETE" }, 405);
      await check("/openapi.json", { method: "POST" }, 405);
      await check("/v1/chat/completions", { method: "PATCH", headers: AUTH }, 405);
    });

    it("every operation of the document was called, and answered with a success", () => {
      const missing: string[] = [];
      for (const [template, item] of Object.entries(document.paths)) {
        for (const method of Object.keys(item).filter((key) => key !== "parameters")) {
          const success = [...seen].some((entry) => entry.startsWith(`${method.toUpperCase()} ${template} 2`));
          if (!success) missing.push(`${method.toUpperCase()} ${template}`);
        }
      }
      expect(missing).toEqual([]);
      const statuses = new Set([...seen].map((entry) => entry.split(" ").at(-1)));
      for (const status of ["400", "401", "403", "404", "405", "413", "415", "429", "502", "504"]) expect(statuses).toContain(status);
    });
  });
}
