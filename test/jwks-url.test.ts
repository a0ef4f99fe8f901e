/**
 * `auth.jwt.jwks_url` (README "Identity-provider tokens"): https, or plain http only to a loopback
 * host — `localhost`, an IPv4 address in 127.0.0.0/8, `[::1]` — compared as the URL parser reads
 * the host, never by its first characters.
 */
import { describe, expect, it } from "vitest";
import { createRouter, type ModelmuxConfig } from "@modelmux/core";
import { ConfigError } from "../core/src/config/config-error.ts";
import { resolveJwt } from "../core/src/config/resolve-jwt.ts";
import { silentLogger, TEST_KEY, testConfig } from "./helpers/harness.ts";

const ECHO = { echo: { plugin: "provider-echo", models: ["echo-1"] } };
const RULE = "auth.jwt.jwks_url: must be an https URL (plain http is allowed only for localhost, 127.0.0.0/8 and [::1])";

function withJwks(jwks_url: string): ModelmuxConfig {
  return testConfig(ECHO, { auth: { api_keys: [{ key: TEST_KEY }], jwt: { issuer: "https://idp.test/", audience: "mm", jwks_url } } });
}

describe("auth.jwt.jwks_url", () => {
  it.each([
    "http://127.evil.example/.well-known/jwks.json",
    "http://127.0.0.1.nip.io/jwks",
    "http://localhost.evil.example/jwks",
    "http://127.0.0.1@evil.example/jwks",
    "http://10.0.0.5/jwks",
    "http://[::2]/jwks",
  ])("refuses plain http to %s when the router is made, naming the key and the rule", async (url) => {
    const error = await createRouter(withJwks(url), { logger: silentLogger(), env: {} }).then(
      async (router) => {
        await router.close();
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(RULE);
  });

  it.each([
    ["http://127.0.0.1:8443/.well-known/jwks.json", "127.0.0.1:8443"],
    ["http://127.10.20.30/jwks", "127.10.20.30"],
    ["http://localhost:8443/jwks", "localhost:8443"],
    ["http://LOCALHOST:8443/jwks", "localhost:8443"],
    ["http://[::1]:8443/jwks", "[::1]:8443"],
    ["http://[0:0:0:0:0:0:0:1]/jwks", "[::1]"],
    ["http://0x7f.1/jwks", "127.0.0.1"],
    ["https://idp.example.com/jwks", "idp.example.com"],
  ])("accepts %s", (url, host) => {
    expect(resolveJwt(withJwks(url))?.jwksUrl.host).toBe(host);
  });

  it("starts a router whose jwks_url is plain http on [::1]", async () => {
    const router = await createRouter(withJwks("http://[::1]:9/.well-known/jwks.json"), { logger: silentLogger(), env: {} });
    await router.close();
  });
});
