/**
 * Admin keys (docs/interface.md, "Authentication"): `admin: true` on an `auth.api_keys` entry, and
 * the guard of the admin endpoints (`requireAdmin`, `core/src/server/auth/admin.ts`). No real
 * endpoint is an admin one yet, so the guard is tried on a route this test adds through
 * `createRouter`'s `middleware` option, over both transports: under `/v1/` (the `auth` middleware
 * found the caller) and outside it (the guard authenticates the request itself).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { exchangeOf, type Middleware, type ModelmuxConfig } from "@modelmux/core";
import { ConfigError } from "../core/src/config/config-error.ts";
import { prepareConfig } from "../core/src/config/load-config.ts";
import { resolveApiKeys } from "../core/src/config/resolve-config.ts";
import { createLogger } from "../core/src/logger.ts";
import { requireAdmin } from "../core/src/server/auth/admin.ts";
import { createAuthenticator, type Authenticate } from "../core/src/server/auth/authenticate.ts";
import { jsonReply } from "../core/src/server/reply.ts";
import { AUDIENCE, ISSUER, signer, startJwksServer, type JwksServer, type Signer } from "./fixtures/jwks-server.ts";
import { startHarness, testConfig, TEST_KEY, TRANSPORTS, type Harness } from "./helpers/harness.ts";

const ADMIN_KEY = "sk-admin-key-0123456789";
const UNKNOWN_KEY = "sk-nobody-0123456789";
const INSIDE = "/v1/admin-probe";
const OUTSIDE = "/admin-probe";

let idp: JwksServer;
let idpKey: Signer;
beforeAll(async () => {
  idpKey = await signer("key-1");
  idp = await startJwksServer([idpKey.jwk]);
});
afterAll(() => idp.close());

function adminConfig(): ModelmuxConfig {
  return testConfig(
    { echo: { plugin: "provider-echo", models: ["echo-1"] } },
    {
      auth: {
        api_keys: [
          { key: TEST_KEY, app: "test-app", developer: "tester" },
          { key: ADMIN_KEY, app: "ops", developer: "root", admin: true },
        ],
        jwt: { issuer: ISSUER, audience: AUDIENCE, jwks_url: idp.jwksUrl },
      },
    },
  );
}

/** The test's admin route at both paths; outside `/v1/` the guard has only `authenticate` to go on. */
function adminProbe(authenticate: Authenticate): Middleware {
  const guarded = requireAdmin(authenticate, (x) => jsonReply({ admin: true, app: x.principal?.app }));
  return function adminProbe(event, next) {
    const x = exchangeOf(event);
    return x.path === INSIDE || x.path === OUTSIDE ? guarded(x) : next();
  };
}

const bearer = (value: string) => ({ headers: { authorization: `Bearer ${value}` } });

async function expectRefused(res: Response, status: number, envelope: Record<string, unknown>): Promise<string> {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(res.headers.get("x-request-id")).toMatch(/\S/);
  const body = (await res.json()) as { error: { message: string } };
  expect(body.error).toMatchObject({ param: null, ...envelope });
  return body.error.message;
}

describe.each(TRANSPORTS)("the admin guard over %s", (transport) => {
  let h: Harness | undefined;
  let lines: string[] = [];
  const start = async () => {
    lines = [];
    // Outside /v1/ the guard gets the same keys as the router, and a token verifier that names a caller.
    const outsideAuthenticate = createAuthenticator(resolveApiKeys(prepareConfig(adminConfig(), {})).keys, {
      verifyJwt: async () => ({ app: "jwt-app", developer: "alice" }),
    });
    const logger = createLogger({ level: "info", format: "json", write: (text) => lines.push(...text.trim().split("\n")) });
    h = await startHarness(adminConfig(), transport, { logger, middleware: (defaults) => [...defaults, adminProbe(outsideAuthenticate)] });
    return h;
  };
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  for (const path of [INSIDE, OUTSIDE]) {
    describe(path, () => {
      it("lets an admin key through, on GET and HEAD", async () => {
        const r = await start();
        const res = await r.request(path, bearer(ADMIN_KEY));
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual({ admin: true, app: "ops" });
        expect((await r.request(path, { method: "HEAD", ...bearer(ADMIN_KEY) })).status).toBe(200);
      });

      it("answers 401 invalid_api_key without a key, with an unknown one, or with another scheme", async () => {
        const r = await start();
        for (const init of [{}, bearer(UNKNOWN_KEY), { headers: { authorization: `Basic ${ADMIN_KEY}` } }]) {
          const res = await r.request(path, init);
          expect(res.headers.get("www-authenticate")).toBe('Bearer realm="modelmux"');
          await expectRefused(res, 401, { type: "api_error", code: "invalid_api_key" });
        }
      });

      it("answers 403 permission_error to a valid key that is not an admin key, saying how to make one", async () => {
        const r = await start();
        const message = await expectRefused(await r.request(path, bearer(TEST_KEY)), 403, { type: "permission_error", code: "admin_required" });
        expect(message).toMatch(/not an admin key|is not one/);
        expect(message).toContain("admin: true on its auth.api_keys entry");
        expect(message).not.toContain(TEST_KEY.slice(-12));
        r.router.logger.flush();
        // The access log names who was refused.
        const access = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.msg === `GET ${path}`);
        expect(access).toEqual([expect.objectContaining({ status: 403, app: "test-app", developer: "tester" })]);
      });

      it("answers 403 to an identity-provider token, whatever its claims say", async () => {
        const r = await start();
        const token = await idpKey.sign({ admin: true, roles: ["admin"], scope: "admin" });
        const message = await expectRefused(await r.request(path, bearer(token)), 403, { type: "permission_error", code: "admin_required" });
        expect(message).toMatch(/identity-provider token is never one/);
        expect(message).toContain("admin: true on its auth.api_keys entry");
      });
    });
  }

  it("leaves every other path to the routes: the echo model still answers the non-admin key", async () => {
    const r = await start();
    expect((await r.openai.chat.completions.create({ model: "echo/echo-1", messages: [{ role: "user", content: "hi" }] })).choices[0]!.message.content).toBe("hi");
    expect((await r.request("/healthz")).status).toBe(200);
  });
});

describe("admin in auth.api_keys", () => {
  const withKey = (entry: Record<string, unknown>) => ({ ...testConfig({ echo: { plugin: "provider-echo", models: ["echo-1"] } }), auth: { api_keys: [entry] } });

  it("marks only the keys that have admin: true", () => {
    const config = prepareConfig(
      { ...withKey({ key: "a" }), auth: { api_keys: [{ key: "a" }, { key: "b", admin: true }, { key: "c", admin: false }] } },
      {},
    );
    const authenticate = createAuthenticator(resolveApiKeys(config).keys);
    expect([authenticate("Bearer a"), authenticate("Bearer b"), authenticate("Bearer c")]).toEqual([
      { app: "default", developer: "default", scheme: "api_key", admin: false },
      { app: "default", developer: "default", scheme: "api_key", admin: true },
      { app: "default", developer: "default", scheme: "api_key", admin: false },
    ]);
  });

  it("takes admin from ${VAR}, and a generated key keeps it", () => {
    const config = prepareConfig(withKey({ key: "${ADMIN_KEY:-}", generate_if_empty: true, admin: "${IS_ADMIN}" }), { IS_ADMIN: "true" });
    const { keys, generated } = resolveApiKeys(config);
    expect(generated).toHaveLength(1);
    expect(keys[0]).toMatchObject({ admin: true, key: generated[0]!.key });
  });

  it("refuses a value that is not a boolean, naming its path", () => {
    let error: unknown;
    try {
      prepareConfig(withKey({ key: "k", admin: "yes" }), {});
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe("auth.api_keys[0].admin: must be a boolean");
  });
});
