/**
 * HTTP details a production client or load balancer relies on: HEAD where GET is served, the
 * scheme named on a 401, and a ceiling on `n` so one request cannot make a reply of any size.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postJson, startHarness, testConfig, TEST_KEY, TRANSPORTS, type Harness } from "./helpers/harness.ts";

for (const transport of TRANSPORTS) {
  describe(`HTTP semantics (${transport})`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await startHarness(testConfig({ echo: { plugin: "provider-echo", models: ["echo-1"] } }), transport);
    });
    afterAll(() => h.close());

    it("answers HEAD on /healthz and /v1/models, and lists HEAD in allow", async () => {
      expect((await h.request("/healthz", { method: "HEAD" })).status).toBe(200);
      const models = await h.request("/v1/models", { method: "HEAD", headers: { authorization: `Bearer ${TEST_KEY}` } });
      expect(models.status).toBe(200);
      expect(await models.text()).toBe("");
      const refused = await h.request("/v1/models", { method: "POST", headers: { authorization: `Bearer ${TEST_KEY}` } });
      expect(refused.headers.get("allow")).toBe("GET, HEAD");
    });

    it("answers a path with broken percent-encoding with a 400 that says so", async () => {
      const res = await h.request("/v1/chat/completions/%E0%A4%A", { headers: { authorization: `Bearer ${TEST_KEY}` } });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { message: string } }).error.message).toContain("percent-encoding");
    });

    it("names the Bearer scheme on a 401", async () => {
      const res = await h.request("/v1/models");
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="modelmux"');
    });

    it("refuses n above 128, naming the field", async () => {
      const res = await h.request("/v1/chat/completions", postJson({ model: "echo/echo-1", n: 129, messages: [{ role: "user", content: "x" }] }));
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: { param: "n", message: "n: must be <= 128" } });
      const ok = await h.request("/v1/chat/completions", postJson({ model: "echo/echo-1", n: 128, max_completion_tokens: 1, messages: [{ role: "user", content: "x" }] }));
      expect(ok.status).toBe(200);
    });
  });
}
