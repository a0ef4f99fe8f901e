/**
 * An unknown key in the config, the core's or a plugin's option, is told with the known key it is
 * closest to, when it is a near miss: `providers.openai.base_ur: is not a known field; did you mean
 * base_url?`. A required key that is missing names a present key that looks like its typo. Request
 * bodies keep their plain message.
 */
import { describe, expect, it } from "vitest";
import { createRouter, type ModelmuxConfig } from "@modelmux/core";
import { ConfigError } from "../core/src/config/config-error.ts";
import { compileValidator, createAjv } from "../core/src/validation/ajv.ts";
import { silentLogger, testConfig } from "./helpers/harness.ts";

async function problemsOf(config: ModelmuxConfig): Promise<readonly string[]> {
  const error = await createRouter(config, { env: {}, logger: silentLogger() }).then(
    async (router) => {
      await router.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return (error as ConfigError).problems;
}

const echo = { plugin: "provider-echo", models: ["echo-1"] };

describe("did you mean", () => {
  it("names the closest core key of the config, at any depth", async () => {
    const config = { ...testConfig({ echo }), sever: { port: 8080 }, logging: { levle: "info" }, routing: { retry: { atempts: 3 } } } as never;
    expect(await problemsOf(config)).toEqual([
      "sever: is not a known field; did you mean server?",
      "logging.levle: is not a known field; did you mean level?",
      "routing.retry.atempts: is not a known field; did you mean attempts?",
    ]);
  });

  it("offers nothing for a key that is no near miss", async () => {
    const config = testConfig({ echo }, { server: { colour: "blue", hots: "127.0.0.1" } as never });
    expect(await problemsOf(config)).toEqual(["server.colour: is not a known field", "server.hots: is not a known field; did you mean host?"]);
  });

  it("names the closest option of the plugin's own schema, or the core key of a provider block", async () => {
    const config = testConfig({
      openai: { plugin: "provider-openai", base_ur: "http://127.0.0.1:9/v1", api_kye: "sk-x", models: ["gpt-4o-mini"] },
      echo: { ...echo, requires_evn: ["X"], timout: "5s" },
    });
    expect(await problemsOf(config)).toEqual([
      "providers.openai.base_ur: is not a known field; did you mean base_url?",
      "providers.openai.api_kye: is not a known field; did you mean api_key?",
      "providers.echo.requires_evn: is not a known field; did you mean requires_env?",
      "providers.echo.timout: is not a known field; did you mean timeout?",
    ]);
  });

  it("names the closest option of a storage plugin", async () => {
    const config = testConfig({ echo }, { storage: { plugin: "storage-unstorage", options: { drvier: "memory", prefx: "mm" } } });
    expect(await problemsOf(config)).toEqual([
      "storage.options.driver: is required (is drvier a typo of it?)",
      "storage.options.drvier: is not a known field; did you mean driver?",
      "storage.options.prefx: is not a known field; did you mean prefix?",
    ]);
  });

  it("names a present key that looks like the typo of a missing one", async () => {
    const config = testConfig({ echo: { plugin: "provider-echo", modles: ["echo-1"] } as never });
    expect(await problemsOf(config)).toEqual(["providers.echo.models: is required (is modles a typo of it?)"]);
  });

  it("leaves a request body's message as it was: the first error, no suggestion", () => {
    const validate = compileValidator(createAjv(), { type: "object", additionalProperties: false, properties: { temperature: { type: "number" } } });
    expect(() => validate({ temprature: 1 })).toThrow(expect.objectContaining({ message: "temprature: is not a known field" }));
  });
});
