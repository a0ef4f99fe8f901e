/**
 * `GET /v1/models` (docs/interface.md, "Models and capabilities"): the models, then the plain aliases
 * and the weighted pools, each marked by `modelmux_kind`, with every field the interface and OpenAI
 * give a model; names whose provider is off are left out, and `modelmux_model_id` is the same for
 * the same config. The openai SDK lists them all.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRouter } from "@modelmux/core";
import { silentLogger, startHarness, TEST_KEY, TRANSPORTS, type Harness } from "./helpers/harness.ts";
import { EXPECTED_MODELS, MODELS_CONFIG } from "./helpers/models-config.ts";

const AUTH = { authorization: `Bearer ${TEST_KEY}` };

for (const transport of TRANSPORTS) {
  describe(`the models list (${transport})`, () => {
    let h: Harness;
    beforeAll(async () => (h = await startHarness(MODELS_CONFIG, transport, { env: {} })));
    afterAll(() => h.close());

    it("lists the models, then the plain aliases, then the pools, each marked, without the names of a provider that is off", async () => {
      const res = await h.request("/v1/models", { headers: AUTH });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { data: unknown[] };
      expect(body).toEqual({ data: EXPECTED_MODELS, first_id: "echo/echo-1", last_id: "spread", has_more: false });
      const times = new Set(body.data.map((m) => JSON.stringify([(m as { created: number }).created, (m as { created_at: string }).created_at])));
      expect(times.size).toBe(1);
    });

    it("is what the openai SDK lists", async () => {
      const ids: string[] = [];
      for await (const model of h.openai.models.list()) ids.push(model.id);
      expect(ids).toEqual(EXPECTED_MODELS.map((m) => m.id));
    });
  });
}

describe("modelmux_model_id", () => {
  it("is the same for the same config, and the list is made once", async () => {
    const bodies: unknown[] = [];
    for (let i = 0; i < 2; i++) {
      const router = await createRouter(MODELS_CONFIG, { env: {}, logger: silentLogger() });
      try {
        const first = await (await router.fetch(new Request("http://modelmux.test/v1/models", { headers: AUTH }))).text();
        const again = await (await router.fetch(new Request("http://modelmux.test/v1/models", { headers: AUTH }))).text();
        expect(again).toBe(first);
        bodies.push((JSON.parse(first) as { data: Array<{ id: string; modelmux_model_id: number }> }).data.map((m) => [m.id, m.modelmux_model_id]));
      } finally {
        await router.close();
      }
    }
    expect(bodies[1]).toEqual(bodies[0]);
  });

  it("lists an alias and a pool whose provider is on once it is", async () => {
    const router = await createRouter(MODELS_CONFIG, { env: { OPENAI_API_KEY: "sk-upstream" }, logger: silentLogger() });
    try {
      const reply = await router.fetch(new Request("http://modelmux.test/v1/models", { headers: AUTH }));
      const data = ((await reply.json()) as { data: Array<{ id: string; modelmux_model_id: number; modelmux_members?: unknown }> }).data;
      expect(data.map((m) => `${m.modelmux_model_id} ${m.id}`)).toEqual([
        "1 echo/echo-1",
        "2 echo/echo-2",
        "3 other/big",
        "4 openai/gpt-4o",
        "5 fast",
        "6 smart",
        "7 quick",
        "8 spread",
        "9 cloudy",
      ]);
      expect(data.find((m) => m.id === "spread")?.modelmux_members).toEqual([
        { model: "echo/echo-1", weight: 3 },
        { model: "openai/gpt-4o", weight: 2 },
        { model: "other/big", weight: 1 },
      ]);
      expect(data.find((m) => m.id === "cloudy")?.modelmux_members).toEqual([{ model: "openai/gpt-4o", weight: 1 }]);
    } finally {
      await router.close();
    }
  });
});
