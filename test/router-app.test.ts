/** `router.app`: the router as an h3 app, made on first use, serving through the fetch handler. */
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
    const refused = await router.app.request("/v1/models");
    expect(refused.status).toBe(401);
    expect(refused.headers.get("x-request-id")).toBeTruthy();
  } finally {
    await router.close();
  }
});
