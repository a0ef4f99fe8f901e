/**
 * End-to-end: API-key authentication (docs/interface.md, "Authentication") over both transports —
 * which Authorization values get 401 and which pass, that /healthz needs none, that auth comes
 * before every other check, and that a key never shows in a reply or in the log.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { createLogger } from "../core/src/logger.ts";
import { postJson, readSse, startHarness, testConfig, TEST_KEY, TRANSPORTS, type Harness } from "./helpers/harness.ts";
import { createProbe } from "./helpers/probe-provider.ts";

const { plugin: probePlugin, state: probe, reset: resetProbe } = createProbe();

const OTHER_KEY = "sk-other-app-key-9876543210";
const UNKNOWN_KEY = "sk-unknown-key-that-must-not-echo";
const config = testConfig({ acme: { plugin: "probe", models: ["m1"] } }, {
  auth: { api_keys: [{ key: TEST_KEY, app: "test-app", developer: "tester" }, { key: OTHER_KEY, app: "other", developer: "o" }] },
  server: { body_limit: "1kb" },
});
const CHAT = "/v1/chat/completions";
const hello = { model: "acme/m1", messages: [{ role: "user", content: "hi" }] };
const KEYS = [TEST_KEY, OTHER_KEY, UNKNOWN_KEY];

/** The reply's status line, headers and body as one text, to search for leaked keys. */
async function wholeReply(res: Response): Promise<string> {
  const headers: string[] = [];
  res.headers.forEach((value, name) => headers.push(`${name}: ${value}`));
  return `${res.status}\n${headers.join("\n")}\n\n${await res.text()}`;
}

function expectNoKey(text: string): void {
  for (const key of KEYS) {
    expect(text).not.toContain(key);
    // A recognisable part is a leak too (a masked key, a prefix in a message).
    expect(text).not.toContain(key.slice(-12));
  }
}

/** Asserts the 401 `invalid_api_key` exactly, and that nothing in the reply carries a key. */
async function expect401(res: Response): Promise<void> {
  const text = await wholeReply(res);
  expect(res.status, text).toBe(401);
  expect(res.headers.get("x-request-id")).toMatch(/\S/);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  const body = JSON.parse(text.slice(text.indexOf("\n\n") + 2)) as { error: { message: string } };
  expect(body).toEqual({ error: { message: expect.stringMatching(/api key/i), type: "api_error", code: "invalid_api_key", param: null } });
  expect(body.error.message).toMatch(/invalid/i);
  expectNoKey(text);
}

/** An SDK client with any key, through the harness's transport. */
function sdkWithKey(h: Harness, apiKey: string): OpenAI {
  return new OpenAI({
    baseURL: h.baseURL,
    apiKey,
    maxRetries: 0,
    fetch: (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      return h.request(url.pathname + url.search, init);
    },
  });
}

const refused: Array<[string, string | undefined]> = [
  ["no Authorization header", undefined],
  ["Basic credentials", `Basic ${Buffer.from(`user:${TEST_KEY}`).toString("base64")}`],
  ["Basic with the key itself", `Basic ${TEST_KEY}`],
  ["Bearer with no key", "Bearer"],
  ["the key with no scheme", TEST_KEY],
  ["another scheme", `Token ${TEST_KEY}`],
  ["an unknown key", `Bearer ${UNKNOWN_KEY}`],
  ["the key with a character more", `Bearer ${TEST_KEY}x`],
  ["the key with a character less", `Bearer ${TEST_KEY.slice(0, -1)}`],
  ["the key in another case", `Bearer ${TEST_KEY.toUpperCase()}`],
  ["two keys", `Bearer ${TEST_KEY} ${OTHER_KEY}`],
  ["the scheme glued to the key", `Bearer${TEST_KEY}`],
];

for (const transport of TRANSPORTS) {
  describe(transport, () => {
    let h: Harness;
    let log = "";
    beforeAll(async () => {
      const logger = createLogger({ level: "debug", format: "json", write: (text) => (log += text) });
      h = await startHarness(config, transport, { plugins: { probe: probePlugin }, logger });
    });
    afterAll(() => h.close());
    beforeEach(resetProbe);

    describe("401 api_error invalid_api_key", () => {
      test.each(refused)("%s", async (_name, authorization) => {
        const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
        await expect401(await h.request(CHAT, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(hello) }));
        await expect401(await h.request("/v1/models", { headers }));
        expect(probe.calls.length).toBe(0);
      });

      test.each([
        ["invalid JSON", { "content-type": "application/json" }, "{"],
        ["a schema error", { "content-type": "application/json" }, JSON.stringify({ ...hello, temperature: 9 })],
        ["an unknown model", { "content-type": "application/json" }, JSON.stringify({ ...hello, model: "nope/x" })],
        ["a body that is not JSON", { "content-type": "text/plain" }, "hello"],
        ["a body over the limit", { "content-type": "application/json" }, JSON.stringify({ ...hello, pad: "x".repeat(20_000) })],
      ])("comes before every other check: %s", async (_name, headers, body) => {
        await expect401(await h.request(CHAT, { method: "POST", headers: { ...headers, authorization: `Bearer ${UNKNOWN_KEY}` }, body }));
        expect(probe.calls.length).toBe(0);
      });

      test("reaches the SDK as AuthenticationError, without the key", async () => {
        const client = sdkWithKey(h, UNKNOWN_KEY);
        for (const call of [() => client.models.list(), () => client.chat.completions.create({ model: "acme/m1", messages: [{ role: "user", content: "hi" }] })]) {
          const error = await call().then(() => new Error("expected a 401"), (e: unknown) => e);
          expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
          const auth = error as InstanceType<typeof OpenAI.AuthenticationError>;
          expect(auth).toMatchObject({ status: 401, type: "api_error", code: "invalid_api_key", param: null });
          expect(auth.requestID).toMatch(/\S/);
          expectNoKey(`${auth.message} ${JSON.stringify(auth.error)}`);
        }
        expect(probe.calls.length).toBe(0);
      });
    });

    describe("accepted", () => {
      test.each([["Bearer"], ["bearer"], ["BEARER"], ["bEaReR"]])("the scheme %s, in any case", async (scheme) => {
        const res = await h.request(CHAT, { ...postJson(hello), headers: { authorization: `${scheme} ${TEST_KEY}`, "content-type": "application/json" } });
        expect(res.status).toBe(200);
        expect(await res.json()).toMatchObject({ object: "chat.completion" });
        expect(probe.calls.length).toBe(1);
      });

      test("more than one space after the scheme, and every configured key", async () => {
        for (const authorization of [`Bearer   ${TEST_KEY}`, `Bearer ${OTHER_KEY}`]) {
          const res = await h.request("/v1/models", { headers: { authorization } });
          expect(res.status).toBe(200);
          await res.text();
        }
        expect((await sdkWithKey(h, OTHER_KEY).models.list()).data.length).toBe(1);
      });

      test("/healthz needs no key and ignores a bad one", async () => {
        const tries: Array<Record<string, string>> = [{}, { authorization: `Bearer ${UNKNOWN_KEY}` }, { authorization: "Basic Zm9vOmJhcg==" }];
        for (const headers of tries) {
          const res = await h.request("/healthz", { headers });
          expect(res.status).toBe(200);
          expect(res.headers.get("x-request-id")).toMatch(/\S/);
          expect(await res.json()).toEqual({ status: "ok" });
        }
      });
    });

    describe("the key never shows", () => {
      test("in a success, a stream, the model list, or an error reply", async () => {
        const replies = [
          await h.request(CHAT, postJson(hello)),
          await h.request(CHAT, postJson({ ...hello, stream: true })),
          await h.request("/v1/models", { headers: { authorization: `Bearer ${TEST_KEY}` } }),
          await h.request(CHAT, postJson({ ...hello, temperature: 9 })),
          await h.request(CHAT, postJson({ ...hello, model: "nope/x" })),
          await h.request(CHAT, postJson({ ...hello, stream: true, n: 2 })),
        ];
        expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 400, 404, 400]);
        expect(await readSse(replies[1]!.clone())).toContain("[DONE]");
        for (const res of replies) expectNoKey(await wholeReply(res));
      });

      test("in a 500 reply or in the log", async () => {
        probe.error = new Error("provider bug");
        expectNoKey(await wholeReply(await h.request(CHAT, postJson(hello))));
        expectNoKey(await wholeReply(await h.request(CHAT, { method: "POST", headers: { authorization: `Bearer ${UNKNOWN_KEY}`, "content-type": "application/json" }, body: "{}" })));
        h.router.logger.flush();
        // The 500 was logged (so the log is really being read) and no key is in it.
        expect(log).toContain("internal error");
        expectNoKey(log);
      });
    });
  });
}
