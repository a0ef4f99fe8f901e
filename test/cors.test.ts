/**
 * `server.cors` (README, "CORS"; docs/interface.md, "CORS"): real preflights, sent as a browser
 * sends them, answered 204 before authentication with the allow headers, the openai SDK's own
 * headers among them; every reply to an allowed origin (JSON, a stream, an error, a 401) readable by
 * its page, with the headers it may read; a disallowed origin gets no CORS header, and its preflight
 * 403. Unset, the `cors` middleware is not in the chain.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRouter, type ModelmuxConfig } from "@modelmux/core";
import { postJson, readSse, silentLogger, startHarness, TEST_KEY, testConfig, TRANSPORTS, type Harness } from "./helpers/harness.ts";

const APP = "https://app.example.com";
const ECHO = { echo: { plugin: "provider-echo", models: ["echo-1"] } };
const AUTH = { authorization: `Bearer ${TEST_KEY}` };
const hello = { model: "echo/echo-1", messages: [{ role: "user" as const, content: "Hello from a page" }] };

/** A preflight as Chrome sends it: no credential, the method and the headers it asks for, lower case, sorted. */
function preflight(h: Harness, path: string, origin: string, method: string, headers: readonly string[]): Promise<Response> {
  const init: Record<string, string> = { origin, "access-control-request-method": method };
  if (headers.length > 0) init["access-control-request-headers"] = [...headers].sort().join(",");
  return h.request(path, { method: "OPTIONS", headers: init });
}

const listOf = (value: string | null) => (value ?? "").split(",").map((name) => name.trim()).filter(Boolean);

/** The header names of a request the openai SDK makes, as a browser would list them in its preflight. */
async function sdkHeaderNames(h: Harness): Promise<string[]> {
  let names: string[] = [];
  const client = new OpenAI({
    baseURL: h.baseURL,
    apiKey: TEST_KEY,
    maxRetries: 0,
    fetch: (input, init) => {
      names = [];
      new Headers(init?.headers).forEach((_, name) => names.push(name));
      return h.request(new URL(String(input)).pathname, init);
    },
  });
  await client.chat.completions.create(hello);
  // What a page needs no permission for (CORS-safelisted), or may not set at all.
  return names.filter((name) => !["accept", "accept-language", "content-language", "content-length"].includes(name));
}

for (const transport of TRANSPORTS) {
  describe(`server.cors with listed origins (${transport})`, () => {
    let h: Harness;
    beforeAll(async () => {
      const config = testConfig(ECHO, { server: { cors: { origins: [APP, "http://localhost:5173"], headers: ["X-Trace"], max_age: "10m" } } });
      h = await startHarness(config, transport);
    });
    afterAll(() => h.close());

    it("answers a preflight 204 without a key: the origin, the methods, the headers, the max age", async () => {
      const res = await preflight(h, "/v1/chat/completions", APP, "POST", ["authorization", "content-type", "x-trace"]);
      expect(res.status).toBe(204);
      expect(await res.text()).toBe("");
      expect(res.headers.get("access-control-allow-origin")).toBe(APP);
      expect(listOf(res.headers.get("vary"))).toContain("origin");
      expect(listOf(res.headers.get("access-control-allow-methods"))).toEqual(["GET", "HEAD", "POST", "DELETE"]);
      expect(listOf(res.headers.get("access-control-allow-headers"))).toEqual(expect.arrayContaining(["authorization", "content-type", "x-request-id", "x-trace"]));
      expect(res.headers.get("access-control-max-age")).toBe("600");
      expect(res.headers.get("access-control-allow-credentials")).toBeNull();
      expect(res.headers.get("x-request-id")).toMatch(/\S/);
    });

    it("allows every header the openai SDK sends, its x-stainless-* ones too, even a new one", async () => {
      const names = await sdkHeaderNames(h);
      expect(names).toEqual(expect.arrayContaining(["authorization", "content-type", "x-stainless-lang", "x-stainless-retry-count"]));
      const res = await preflight(h, "/v1/chat/completions", APP, "POST", [...names, "x-stainless-something-new"]);
      expect(res.status).toBe(204);
      const allowed = listOf(res.headers.get("access-control-allow-headers"));
      for (const name of [...names, "x-stainless-something-new"]) expect(allowed, name).toContain(name);
    });

    it("makes JSON replies readable by the page, with the headers it may read", async () => {
      const res = await h.request("/v1/models", { headers: { ...AUTH, origin: APP } });
      expect(res.status).toBe(200);
      expect(res.headers.get("access-control-allow-origin")).toBe(APP);
      expect(listOf(res.headers.get("vary"))).toContain("origin");
      const exposed = listOf(res.headers.get("access-control-expose-headers"));
      expect(exposed).toEqual(
        expect.arrayContaining(["x-request-id", "x-ratelimit-limit-requests", "x-ratelimit-remaining-tokens", "x-modelmux-model", "x-modelmux-attempts", "retry-after"]),
      );
      const chat = await h.request("/v1/chat/completions", postJson(hello, { origin: "http://localhost:5173" }));
      expect(chat.status).toBe(200);
      expect(chat.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
      expect(chat.headers.get("x-modelmux-model")).toBe("echo/echo-1");
    });

    it("and streams", async () => {
      const res = await h.request("/v1/chat/completions", postJson({ ...hello, stream: true }, { origin: APP }));
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
      expect(res.headers.get("access-control-allow-origin")).toBe(APP);
      expect((await readSse(res)).at(-1)).toBe("[DONE]");
    });

    it("and errors: a 401 without a key, a 404 model_not_found, a 405", async () => {
      const unauthorized = await h.request("/v1/models", { headers: { origin: APP } });
      expect(unauthorized.status).toBe(401);
      expect(unauthorized.headers.get("access-control-allow-origin")).toBe(APP);
      expect(unauthorized.headers.get("access-control-expose-headers")).toContain("x-request-id");
      const missing = await h.request("/v1/chat/completions", postJson({ ...hello, model: "nobody/nothing" }, { origin: APP }));
      expect(missing.status).toBe(404);
      expect(missing.headers.get("access-control-allow-origin")).toBe(APP);
      const wrong = await h.request("/v1/models", { method: "DELETE", headers: { ...AUTH, origin: APP } });
      expect(wrong.status).toBe(405);
      expect(wrong.headers.get("access-control-allow-origin")).toBe(APP);
    });

    it("the SDK's replies carry it", async () => {
      const client = new OpenAI({ baseURL: h.baseURL, apiKey: TEST_KEY, maxRetries: 0, defaultHeaders: { origin: APP }, fetch: (input, init) => h.request(new URL(String(input)).pathname, init) });
      const { response } = await client.chat.completions.create(hello).withResponse();
      expect(response.headers.get("access-control-allow-origin")).toBe(APP);
    });

    it("gives a disallowed origin no CORS header: its preflight is 403, its requests are served as any other", async () => {
      const refused = await preflight(h, "/v1/chat/completions", "https://evil.example", "POST", ["authorization", "content-type"]);
      expect(refused.status).toBe(403);
      expect(refused.headers.get("access-control-allow-origin")).toBeNull();
      expect(refused.headers.get("access-control-allow-headers")).toBeNull();
      expect(((await refused.json()) as { error: unknown }).error).toEqual({
        message: "Origin 'https://evil.example' may not call this router from a browser: add it to server.cors.origins in the router's config.",
        type: "permission_error",
        code: "origin_not_allowed",
        param: null,
      });
      // An origin differs from a listed one by its scheme, port or host only.
      for (const origin of ["http://app.example.com", "https://app.example.com:8443", "https://evil.app.example.com"]) {
        const res = await h.request("/v1/models", { headers: { ...AUTH, origin } });
        expect(res.status, origin).toBe(200);
        expect(res.headers.get("access-control-allow-origin"), origin).toBeNull();
        expect(res.headers.get("access-control-expose-headers"), origin).toBeNull();
        expect(listOf(res.headers.get("vary")), origin).toContain("origin");
      }
      const noOrigin = await h.request("/v1/models", { headers: AUTH });
      expect(noOrigin.headers.get("access-control-allow-origin")).toBeNull();
    });

    it("leaves an OPTIONS that is not a preflight to the routes: 401 under /v1, 405 elsewhere", async () => {
      const plain = await h.request("/v1/models", { method: "OPTIONS", headers: { origin: APP } });
      expect(plain.status).toBe(401);
      expect(plain.headers.get("access-control-allow-origin")).toBe(APP);
      expect((await h.request("/healthz", { method: "OPTIONS" })).status).toBe(405);
    });
  });

  describe(`server.cors with origins "*" (${transport})`, () => {
    let h: Harness;
    beforeAll(async () => (h = await startHarness(testConfig(ECHO, { server: { cors: { origins: "*" } } }), transport)));
    afterAll(() => h.close());

    it("answers any origin with *, the same reply for all, and the default max age", async () => {
      const res = await preflight(h, "/v1/models", "https://anywhere.example", "GET", ["authorization"]);
      expect(res.status).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(res.headers.get("access-control-max-age")).toBe("7200");
      const reply = await h.request("/v1/models", { headers: { ...AUTH, origin: "https://anywhere.example" } });
      expect(reply.headers.get("access-control-allow-origin")).toBe("*");
      expect(listOf(reply.headers.get("vary"))).not.toContain("origin");
    });
  });
}

describe("server.cors in the config", () => {
  async function middlewareNames(config: ModelmuxConfig): Promise<string[]> {
    let names: string[] = [];
    const router = await createRouter(config, {
      logger: silentLogger(),
      middleware: (defaults) => {
        names = defaults.map((m) => m.name);
        return defaults;
      },
    });
    await router.close();
    return names;
  }

  it("puts cors after the counting middleware and before auth, and nowhere when unset", async () => {
    expect(await middlewareNames(testConfig(ECHO, { server: { cors: { origins: [APP] } } }))).toEqual(["requestId", "accessLog", "metrics", "usageCounters", "activity", "cors", "auth", "bodyLimit"]);
    expect(await middlewareNames(testConfig(ECHO))).toEqual(["requestId", "accessLog", "metrics", "usageCounters", "activity", "auth", "bodyLimit"]);
  });

  it("unset: a preflight is a request like any other, 401 under /v1, without CORS headers", async () => {
    const router = await createRouter(testConfig(ECHO), { logger: silentLogger() });
    try {
      const init = { method: "OPTIONS", headers: { origin: APP, "access-control-request-method": "POST" } };
      const res = await router.fetch(new Request("http://modelmux.test/v1/chat/completions", init));
      expect(res.status).toBe(401);
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
    } finally {
      await router.close();
    }
  });

  it.each([
    [{ origins: "https://app.example.com" }, 'server.cors.origins: must be "*" (every origin) or a list of origins, e.g. [https://app.example.com]'],
    [{ origins: [] }, "server.cors.origins: must have at least 1 item"],
    [{ origins: ["https://app.example.com/chat"] }, "server.cors.origins[0]: 'https://app.example.com/chat' is not an origin: give the scheme, host and optional port a browser sends, e.g. https://app.example.com or http://localhost:5173"],
    [{ origins: ["*"] }, 'server.cors.origins[0]: "*" allows every origin as the whole value (origins: "*"), not as an item of the list'],
    [{ origins: "*", headers: ["x trace"] }, "server.cors.headers[0]: must be a header name, e.g. x-my-header"],
    [{ origins: "*", max_age: "a while" }, "server.cors.max_age: must be a duration: a number of seconds or a string like 60s, 5m, 12h, 30d (units ms, s, m, h, d)"],
  ])("refuses %j at start, naming the path", async (cors, message) => {
    const config = testConfig(ECHO, { server: { cors: cors as NonNullable<NonNullable<ModelmuxConfig["server"]>["cors"]> } });
    await expect(createRouter(config, { logger: silentLogger() })).rejects.toThrow(message);
  });

  it("matches an origin as browsers send it: lower case, no default port, no trailing slash", async () => {
    const h = await startHarness(testConfig(ECHO, { server: { cors: { origins: ["HTTPS://App.Example.com:443/"] } } }), "fetch");
    try {
      const res = await h.request("/v1/models", { headers: { ...AUTH, origin: APP } });
      expect(res.headers.get("access-control-allow-origin")).toBe(APP);
    } finally {
      await h.close();
    }
  });
});
