/**
 * `GET /v1/models/{model}` (docs/interface.md, "Models and capabilities"): one entry of the models
 * list, for a model, an alias or a pool, whether its `/` comes percent-encoded (as the openai SDK's
 * `models.retrieve` sends it) or as is; 404 `model_not_found` for any other name, saying so when its
 * provider is off.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHarness, TEST_KEY, testConfig, TRANSPORTS, type Harness } from "./helpers/harness.ts";
import { MODELS_CONFIG } from "./helpers/models-config.ts";

const AUTH = { authorization: `Bearer ${TEST_KEY}` };
/** Model ids with a `/` and a `:` of their own, as vLLM and Ollama name models. */
const CONFIG = testConfig(
  { ...MODELS_CONFIG.providers, local: { plugin: "provider-echo", models: ["Qwen/Qwen2.5-7B-Instruct", "llama3.1:8b"] } },
  { aliases: MODELS_CONFIG.aliases },
);

for (const transport of TRANSPORTS) {
  describe(`retrieving a model (${transport})`, () => {
    let h: Harness;
    /** The paths the SDK client below sent. */
    const sent: string[] = [];
    let client: OpenAI;
    /** The list's entries by name. */
    let listed: Map<string, unknown>;
    beforeAll(async () => {
      h = await startHarness(CONFIG, transport, { env: {} });
      const list = (await (await h.request("/v1/models", { headers: AUTH })).json()) as { data: Array<{ id: string }> };
      listed = new Map(list.data.map((entry) => [entry.id, entry]));
      client = new OpenAI({
        baseURL: h.baseURL,
        apiKey: TEST_KEY,
        maxRetries: 0,
        fetch: (input, init) => {
          const url = new URL(input instanceof Request ? input.url : String(input));
          sent.push(url.pathname);
          return h.request(`${url.pathname}${url.search}`, init);
        },
      });
    });
    afterAll(() => h.close());

    it("the SDK's models.retrieve sends the / percent-encoded and gets the list's entry", async () => {
      expect(await client.models.retrieve("echo/echo-1")).toEqual(listed.get("echo/echo-1"));
      expect(sent.at(-1)).toBe("/v1/models/echo%2Fecho-1");
    });

    it("an alias and a pool retrieve as the list shows them", async () => {
      expect(await client.models.retrieve("fast")).toEqual(listed.get("fast"));
      expect(listed.get("fast")).toMatchObject({ modelmux_kind: "alias", modelmux_target: "echo/echo-1" });
      expect(await client.models.retrieve("spread")).toEqual(listed.get("spread"));
      expect(listed.get("spread")).toMatchObject({ modelmux_kind: "pool", modelmux_members: [{ model: "echo/echo-1", weight: 3 }, { model: "other/big", weight: 1 }] });
    });

    it("takes a `provider/model` as is too, however many segments the model id has", async () => {
      const encoded = await h.request("/v1/models/echo%2Fecho-1", { headers: AUTH });
      const raw = await h.request("/v1/models/echo/echo-1", { headers: AUTH });
      expect(raw.status).toBe(200);
      expect(await raw.text()).toBe(await encoded.text());
      for (const path of ["/v1/models/local/Qwen/Qwen2.5-7B-Instruct", "/v1/models/local%2FQwen%2FQwen2.5-7B-Instruct"]) {
        const res = await h.request(path, { headers: AUTH });
        expect(res.status, path).toBe(200);
        expect(await res.json()).toMatchObject({ id: "local/Qwen/Qwen2.5-7B-Instruct", model_name: "Qwen/Qwen2.5-7B-Instruct", modelmux_kind: "model" });
      }
      expect(await client.models.retrieve("local/llama3.1:8b")).toMatchObject({ id: "local/llama3.1:8b", model_provider: "local" });
    });

    it("answers HEAD with the GET's headers and no body", async () => {
      const res = await h.request("/v1/models/echo%2Fecho-1", { method: "HEAD", headers: AUTH });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      expect(res.headers.get("x-request-id")).toMatch(/\S/);
      expect(await res.text()).toBe("");
    });

    it("is 404 model_not_found for a name the config does not have", async () => {
      const error = await client.models.retrieve("nobody/nothing").catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect(error).toMatchObject({ status: 404, code: "model_not_found", param: "model" });
      expect((error as Error).message).toContain("The model 'nobody/nothing' does not exist");
      const res = await h.request("/v1/models/nobody", { headers: AUTH });
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("model_not_found");
    });

    it("is 404 model_not_found naming the variable for a model, an alias or a pool whose provider is off", async () => {
      for (const name of ["openai/gpt-4o", "smart", "cloudy"]) {
        const error = await client.models.retrieve(name).catch((e: unknown) => e);
        expect(error, name).toBeInstanceOf(OpenAI.NotFoundError);
        expect((error as Error).message, name).toContain(`The model '${name}' is off: its provider 'openai' requires OPENAI_API_KEY`);
      }
    });

    it("refuses what is not a name: an empty segment, a trailing slash, bad percent-encoding, another method, no key", async () => {
      for (const path of ["/v1/models/", "/v1/models/echo/echo-1/", "/v1/models/echo//echo-1"]) {
        const res = await h.request(path, { headers: AUTH });
        expect(res.status, path).toBe(404);
        expect(((await res.json()) as { error: { code: string } }).error.code, path).toBe("not_found");
      }
      const malformed = await h.request("/v1/models/%E0%A4%A", { headers: AUTH });
      expect(malformed.status).toBe(400);
      expect(((await malformed.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
      const post = await h.request("/v1/models/echo%2Fecho-1", { method: "POST", headers: AUTH });
      expect(post.status).toBe(405);
      expect(post.headers.get("allow")).toBe("GET, HEAD");
      expect((await h.request("/v1/models/echo%2Fecho-1")).status).toBe(401);
    });
  });
}
