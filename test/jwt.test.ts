/**
 * End-to-end: identity-provider tokens (`auth.jwt`; docs/interface.md, "Authentication") against a
 * JWKS server on 127.0.0.1, over both transports, with the openai SDK as client: which tokens pass
 * and which get the 401 envelope, key rotation and its cooldown, a stalled identity provider, the
 * scope a token's claims give to rate limits, and that no token ever reaches the log.
 */
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ModelmuxConfig } from "@modelmux/core";
import { createAuthenticator } from "../core/src/server/auth/authenticate.ts";
import { createLogger } from "../core/src/logger.ts";
import { AUDIENCE, ISSUER, signer, startJwksServer, unsignedToken, type JwksServer, type Signer } from "./fixtures/jwks-server.ts";
import { postJson, startHarness, testConfig, TEST_KEY, TRANSPORTS, type Harness, type Transport } from "./helpers/harness.ts";

const CHAT = "/v1/chat/completions";
const hello = { model: "echo/echo-1", messages: [{ role: "user" as const, content: "hi" }] };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const COOLDOWN_MS = 300;

let idp: JwksServer;
let key1: Signer;
let key2: Signer;
let stranger: Signer;
beforeAll(async () => {
  [key1, key2, stranger] = await Promise.all([signer("key-1"), signer("key-2"), signer("key-1")]);
  idp = await startJwksServer([key1.jwk]);
});
afterAll(() => idp.close());

function jwtConfig(jwksUrl: string, extra: Partial<ModelmuxConfig> = {}, jwt: Record<string, unknown> = {}): ModelmuxConfig {
  return testConfig(
    { echo: { plugin: "provider-echo", models: ["echo-1"] } },
    {
      auth: {
        api_keys: [{ key: TEST_KEY, app: "test-app", developer: "tester" }],
        jwt: { issuer: ISSUER, audience: AUDIENCE, jwks_url: jwksUrl, jwks_cooldown: `${COOLDOWN_MS}ms`, jwks_timeout: "300ms", clock_tolerance: "0s", ...jwt },
      },
      ...extra,
    },
  );
}

/** The 401 `invalid_api_key` with the reason in the message. */
async function expect401(res: Response, reason: RegExp): Promise<void> {
  expect(res.status).toBe(401);
  const body = (await res.json()) as { error: { message: string } };
  expect(body).toEqual({ error: { message: expect.stringMatching(/^Invalid API key: the Bearer token is a JWT that failed verification: /), type: "api_error", code: "invalid_api_key", param: null } });
  expect(body.error.message).toMatch(reason);
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

for (const transport of TRANSPORTS) {
  describe(`auth.jwt (${transport})`, () => {
    let h: Harness | undefined;
    let lines: string[] = [];
    const start = async (config: ModelmuxConfig, t: Transport = transport) => {
      lines = [];
      const logger = createLogger({ level: "debug", format: "json", write: (text) => lines.push(...text.trim().split("\n")) });
      h = await startHarness(config, t, { logger });
      return h;
    };
    afterEach(async () => {
      await h?.close();
      h = undefined;
      idp.keys = [key1.jwk];
      idp.stall = false;
    });
    const chat = (token: string, body: unknown = hello) => h!.request(CHAT, postJson(body, bearer(token)));

    it("accepts a valid token through the openai SDK; the API keys still work", async () => {
      const r = await start(jwtConfig(idp.jwksUrl));
      const token = await key1.sign();
      const client = new OpenAI({ baseURL: r.baseURL, apiKey: token, maxRetries: 0, fetch: (input, init) => r.request(new URL(String(input)).pathname, init) });
      const reply = await client.chat.completions.create(hello);
      expect(reply.choices[0]!.message.content).toBe("hi");
      expect((await r.openai.chat.completions.create(hello)).choices[0]!.message.content).toBe("hi");
      r.router.logger.flush();
      // The access log names the token's app (azp) and developer (sub), never the token.
      const access = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.msg === `POST ${CHAT}`);
      expect(access.map((entry) => [entry.app, entry.developer])).toEqual([["jwt-app", "alice"], ["test-app", "tester"]]);
      expect(lines.join("\n")).not.toContain(token.split(".")[2]);
    });

    it.each<[string, Record<string, unknown>, RegExp]>([
      ["expired", { exp: Math.floor(Date.now() / 1000) - 60 }, /it has expired \(exp\)\.$/],
      ["not valid yet (nbf in the future)", { nbf: Math.floor(Date.now() / 1000) + 600 }, /it is not valid yet \(nbf\)\.$/],
      ["for another audience", { aud: "someone-else" }, /it is for another audience \(aud\)\.$/],
      ["from another issuer", { iss: "https://evil.example/" }, /it was issued by another issuer \(iss\)\.$/],
      ["without exp", { exp: undefined }, /it has no 'exp' claim\.$/],
      ["without the app claim", { azp: undefined }, /it has no 'azp' claim to name its app \(auth\.jwt\.app_claim\)\.$/],
    ])("refuses a token %s", async (_case, claims, reason) => {
      await start(jwtConfig(idp.jwksUrl));
      await expect401(await chat(await key1.sign(claims)), reason);
    });

    it("refuses a token signed with another key under a listed kid, and an unsigned one", async () => {
      await start(jwtConfig(idp.jwksUrl));
      await expect401(await chat(await stranger.sign()), /its signature does not verify\.$/);
      // Unsigned (alg none): not even the shape of a signed JWT, so an unknown key.
      const unsigned = await chat(unsignedToken({ iss: ISSUER, aud: AUDIENCE, sub: "x", azp: "y", exp: 2e9 }));
      expect(unsigned.status).toBe(401);
      expect((await unsigned.json()).error).toMatchObject({ type: "api_error", code: "invalid_api_key" });
      // alg none with a made-up signature part: a JWT that jose refuses.
      await expect401(await chat(`${unsignedToken({ iss: ISSUER, aud: AUDIENCE, sub: "x", azp: "y", exp: 2e9 })}c2ln`), /malformed or of an unsupported kind\.$/);
    });

    it("fetches the keys again for a new kid (a rotation), at most once per cooldown", async () => {
      const r = await start(jwtConfig(idp.jwksUrl));
      expect((await chat(await key1.sign())).status).toBe(200);
      const before = idp.hits;
      // key-2 is not published yet: one refetch at most (the cooldown may already allow it), then 401.
      await sleep(COOLDOWN_MS + 50);
      await expect401(await chat(await key2.sign()), /signed with a key the identity provider does not list \(kid\)\.$/);
      expect(idp.hits).toBe(before + 1);
      // Within the cooldown another unknown kid costs no fetch.
      await expect401(await chat(await key2.sign({ sub: "bob" })), /does not list/);
      expect(idp.hits).toBe(before + 1);
      // The identity provider rotates: key-2 appears. After the cooldown a key-2 token fetches it.
      idp.keys = [key1.jwk, key2.jwk];
      await sleep(COOLDOWN_MS + 50);
      expect((await chat(await key2.sign())).status).toBe(200);
      expect(idp.hits).toBe(before + 2);
      // Both keys now verify from the cache, with no fetch.
      expect((await chat(await key1.sign())).status).toBe(200);
      expect((await chat(await key2.sign())).status).toBe(200);
      expect(idp.hits).toBe(before + 2);
      expect(r.transport).toBe(transport);
    });

    it("answers 401 within jwks_timeout when the identity provider does not answer, and logs it once", async () => {
      const stalled = await startJwksServer([key1.jwk]);
      stalled.stall = true;
      try {
        const r = await start(jwtConfig(stalled.jwksUrl));
        const began = performance.now();
        await expect401(await chat(await key1.sign()), /keys \(JWKS\) could not be fetched in time\.$/);
        expect(performance.now() - began).toBeLessThan(1_500);
        await expect401(await chat(await key1.sign()), /could not be fetched/);
        r.router.logger.flush();
        expect(lines.filter((line) => line.includes("identity provider at 127.0.0.1"))).toHaveLength(1);
      } finally {
        await stalled.close();
      }
    });

    it("gives a token's claims as the rate-limit scope: one developer limited, another not", async () => {
      await start(jwtConfig(idp.jwksUrl, { rate_limit: { developer: { requests: 2, window: "60s" }, app: { requests: 100, window: "60s" } } }));
      const alice = () => key1.sign({ sub: "alice" });
      expect((await chat(await alice())).status).toBe(200);
      expect((await chat(await alice())).status).toBe(200);
      const refused = await chat(await alice());
      expect(refused.status).toBe(429);
      expect((await refused.json()).error.message).toMatch(/^Rate limit reached for developer 'alice': 2 requests per 1m0s/);
      expect((await chat(await key1.sign({ sub: "bob" }))).status).toBe(200);
    });

    it("reads app and developer from the configured claims", async () => {
      await start(
        jwtConfig(idp.jwksUrl, { rate_limit: { app: { requests: 1, window: "60s" } } }, { app_claim: "client_id", developer_claim: "email" }),
      );
      const token = (email: string) => key1.sign({ client_id: "billing", email, azp: undefined });
      expect((await chat(await token("a@example.com"))).status).toBe(200);
      const refused = await chat(await token("b@example.com"));
      expect(refused.status).toBe(429);
      expect((await refused.json()).error.message).toMatch(/^Rate limit reached for app 'billing'/);
      await expect401(await chat(await key1.sign({ client_id: "billing" })), /it has no 'email' claim to name its developer \(auth\.jwt\.developer_claim\)\.$/);
    });
  });
}

describe("auth.jwt off", () => {
  it("treats a JWT as an unknown API key when auth.jwt is not configured", async () => {
    const h = await startHarness(testConfig({ echo: { plugin: "provider-echo", models: ["echo-1"] } }), "fetch");
    const res = await h.request(CHAT, postJson(hello, bearer(await key1.sign())));
    expect(res.status).toBe(401);
    expect((await res.json()).error.message).toMatch(/^Invalid API key\. /);
    await h.close();
  });
});

describe("the principal's scheme", () => {
  it("is api_key for a key, synchronously, and jwt for a token", async () => {
    const authenticate = createAuthenticator([{ key: TEST_KEY, app: "a", developer: "d" }], { verifyJwt: async () => ({ app: "ja", developer: "jd" }) });
    expect(authenticate(`Bearer ${TEST_KEY}`)).toEqual({ app: "a", developer: "d", scheme: "api_key", admin: false });
    expect(await authenticate(`Bearer ${await key1.sign()}`)).toEqual({ app: "ja", developer: "jd", scheme: "jwt", admin: false });
    expect(() => authenticate("Bearer not-a-key")).toThrow(/Invalid API key/);
  });
});
