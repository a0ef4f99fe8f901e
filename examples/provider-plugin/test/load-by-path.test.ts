/**
 * The plugin as a user meets it: named by path in a YAML config, loaded by the core (not handed in
 * as an object, as the conformance kit does), and accepted by `modelmux check`.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createLogger, createRouter, readConfigFile, type ChatCompletion, type Router } from "@modelmux/core";
import type { ConformanceUpstream } from "@modelmux/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parrotRequestReader, startFakeParrot } from "./fake-parrot.ts";

const CONFIG = fileURLToPath(new URL("../modelmux.example.yaml", import.meta.url));
const REPO_ROOT = fileURLToPath(new URL("../../..", import.meta.url));

describe("modelmux.example.yaml", () => {
  let fake: ConformanceUpstream;
  let router: Router;
  beforeAll(async () => {
    fake = await startFakeParrot();
    const { raw, baseDir } = readConfigFile(CONFIG);
    const env = { MODELMUX_API_KEY: "sk-example", PARROT_BASE_URL: String(fake.options.base_url), PARROT_API_KEY: String(fake.options.api_key) };
    router = await createRouter(raw, { baseDir, env, logger: createLogger({ level: "silent" }) });
  });
  afterAll(async () => {
    await router?.close();
    await fake?.close();
  });

  it("loads the plugin from ./src/index.ts and routes parrot/parrot-1 to the upstream", async () => {
    fake.next({ text: "Polly wants a router" });
    const res = await router.fetch(
      new Request("http://local.test/v1/chat/completions", {
        method: "POST",
        headers: { authorization: "Bearer sk-example", "content-type": "application/json" },
        body: JSON.stringify({ model: "parrot/parrot-1", messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }] }),
      }),
    );
    expect(res.status).toBe(200);
    expect(((await res.json()) as ChatCompletion).choices[0]!.message.content).toBe("Polly wants a router");
    const received = fake.requests[0]!;
    expect(received).toMatchObject({ method: "POST", path: "/v2/generate", headers: { "x-parrot-key": fake.options.api_key } });
    expect(parrotRequestReader.model(received)).toBe("parrot-1");
    expect(received.body).toMatchObject({ prompt: [{ speaker: "system", text: "Be brief." }, { speaker: "human", text: "Hi" }] });
  });

  it("passes `modelmux check`", async () => {
    const env = { ...process.env, PARROT_BASE_URL: "", PARROT_API_KEY: "", MODELMUX_CONFIG: "" };
    const { stdout } = await promisify(execFile)(process.execPath, ["core/bin/modelmux.mjs", "check", "--config", CONFIG], { cwd: REPO_ROOT, env, timeout: 15_000 });
    expect(stdout).toContain("1 model(s): parrot/parrot-1");
  });
});
