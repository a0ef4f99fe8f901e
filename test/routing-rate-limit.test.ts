/**
 * Rate limits under routing (docs/interface.md, "Routing and resilience"): a target whose
 * provider's limit is full is passed over while another remains; the app's limit counts a request
 * once, whichever target answers. Two echo providers, the openai SDK as client, over both transports.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ModelmuxConfig } from "@modelmux/core";
import { startHarness, testConfig, TRANSPORTS, type Harness } from "./helpers/harness.ts";

const ask = { model: "a/echo-1", messages: [{ role: "user" as const, content: "hello" }] };

function config(limits: Pick<ModelmuxConfig, "rate_limit">): ModelmuxConfig {
  return testConfig(
    {
      a: { plugin: "provider-echo", models: ["echo-1"], rate_limit: { requests: 1, window: "60s" } },
      b: { plugin: "provider-echo", models: ["echo-1"] },
    },
    { fallbacks: { "a/echo-1": ["b/echo-1"] }, ...limits },
  );
}

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe.each(TRANSPORTS)("rate limits across targets (%s)", (transport) => {
  it("passes over a target whose provider's limit is full: the fallback answers", async () => {
    h = await startHarness(config({}), transport);
    const first = await h.openai.chat.completions.create(ask).withResponse();
    expect(first.response.headers.get("x-modelmux-model")).toBe("a/echo-1");
    const second = await h.openai.chat.completions.create(ask).withResponse();
    expect(second.data.choices[0]!.message.content).toBe("hello");
    expect(second.response.headers.get("x-modelmux-model")).toBe("b/echo-1");
    // One upstream call: the target passed over made none.
    expect(second.response.headers.get("x-modelmux-attempts")).toBe("1");
  });

  it("counts the app's limit once per request, at the target that got a grant", async () => {
    h = await startHarness(config({ rate_limit: { app: { requests: 2, window: "60s" } } }), transport);
    await h.openai.chat.completions.create(ask);
    const second = await h.openai.chat.completions.create(ask).withResponse();
    expect(second.response.headers.get("x-modelmux-model")).toBe("b/echo-1");
    // Two requests so far, one each: the app's third is refused, whatever target it would go to.
    const third = await h.openai.chat.completions.create(ask).catch((error: unknown) => error as { status: number; message: string; headers: Headers });
    expect(third).toMatchObject({ status: 429 });
    expect((third as { message: string }).message).toContain("app 'test-app'");
    // The router refused it before any upstream call: no attempts to report.
    expect((third as { headers: Headers }).headers.get("x-modelmux-attempts")).toBeNull();
  });
});
