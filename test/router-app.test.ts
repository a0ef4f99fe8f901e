/** `router.app`: the router's h3 app, the one every request goes through, served alone and mounted in another h3 app. */
import { H3 } from "h3";
import { expect, it } from "vitest";
import { createRouter } from "@modelmux/core";
import { silentLogger, testConfig, TEST_KEY } from "./helpers/harness.ts";

it("serves the router's routes, and mounts in another h3 app", async () => {
  const router = await createRouter(testConfig({ echo: { plugin: "provider-echo", models: ["echo-1"] } }), { logger: silentLogger() });
  try {
    expect(router.app).toBe(router.app);
    const health = await router.app.request("/healthz");
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });
    const host = new H3().mount("/llm", router.app);
    const models = await host.request("/llm/v1/models", { headers: { authorization: `Bearer ${TEST_KEY}` } });
    expect(models.status).toBe(200);
    expect(((await models.json()) as { data: Array<{ id: string }> }).data.map((m) => m.id)).toEqual(["echo/echo-1"]);
    const chat = await host.request("/llm/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "echo/echo-1", messages: [{ role: "user", content: "through h3" }] }),
    });
    expect(chat.status).toBe(200);
    expect(((await chat.json()) as { object: string }).object).toBe("chat.completion");
    // Mounted, the router's middleware still answer in its envelope, and its 404 covers its paths only.
    const unauthorized = await host.request("/llm/v1/models");
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get("x-request-id")).toBeTruthy();
    expect(((await unauthorized.json()) as { error: { code: string } }).error.code).toBe("invalid_api_key");
    const unknown = await host.request("/llm/v1/nope", { headers: { authorization: `Bearer ${TEST_KEY}` } });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe("not_found");
    const refused = await router.app.request("/v1/models");
    expect(refused.status).toBe(401);
    expect(refused.headers.get("x-request-id")).toBeTruthy();
  } finally {
    await router.close();
  }
});
