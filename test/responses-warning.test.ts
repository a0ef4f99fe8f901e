/**
 * A `responses.provider` none of whose models has the `responses` capability (docs/interface.md,
 * "Responses API"): the config is valid, but every `POST /v1/responses` would be refused, so the
 * router says so with the fix: in `Router.warnings`, and on `modelmux check`'s stderr.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createRouter, type ModelmuxConfig } from "@modelmux/core";
import { silentLogger, testConfig } from "./helpers/harness.ts";
import { startCli } from "./helpers/serve-child.ts";

const FIXTURE = fileURLToPath(new URL("./fixtures/configs/responses-no-capability.yaml", import.meta.url));
const WARNING =
  "responses.provider: no model of provider 'echo' has the responses capability, so POST /v1/responses refuses every request; " +
  "if its server serves /v1/responses, set capabilities: { responses: true } on providers.echo, or on its models' entries";

async function warningsOf(config: ModelmuxConfig): Promise<readonly string[]> {
  const router = await createRouter(config, { logger: silentLogger(), env: {} });
  await router.close();
  return router.warnings;
}

describe("the responses provider's capability", () => {
  it("is a warning when no model of responses.provider has it", async () => {
    const echo = { plugin: "provider-echo", models: ["echo-1"], capabilities: { responses: false } };
    expect(await warningsOf(testConfig({ echo }, { responses: { provider: "echo" } }))).toEqual([WARNING]);
  });

  it("is no warning when one model has it, when the responses API is off, or when its provider is off", async () => {
    const echo = { plugin: "provider-echo", models: ["echo-1", { id: "echo-2", capabilities: { responses: true } }], capabilities: { responses: false } };
    expect(await warningsOf(testConfig({ echo }, { responses: { provider: "echo" } }))).toEqual([]);
    expect(await warningsOf(testConfig({ echo: { ...echo, models: ["echo-1"] } }))).toEqual([]);
    const off = { ...echo, models: ["echo-1"], requires_env: ["ECHO_ON"] };
    expect(await warningsOf(testConfig({ echo: off, other: { plugin: "provider-echo", models: ["x"] } }, { responses: { provider: "echo" } }))).toEqual([]);
  });

  it("modelmux check prints it on stderr and still exits 0", async () => {
    const running = startCli(["check", "--config", FIXTURE], { timeLimitMs: 60_000 });
    const { code } = await running.exited;
    expect(code).toBe(0);
    expect(running.stderr().split("\n").filter((line) => line.includes("warning"))).toEqual([`[modelmux] warning: ${WARNING}`]);
    expect(running.stdout()).toBe(`[modelmux] ${FIXTURE} is valid: 2 model(s): echo/echo-1, echo/echo-2\n`);
  }, 60_000);
});
