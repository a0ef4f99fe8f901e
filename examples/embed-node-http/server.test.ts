import OpenAI from "openai";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createExampleServer } from "./server.ts";

let base: string;
let close: () => Promise<void>;

beforeAll(async () => {
  const { server, router } = await createExampleServer("sk-example-test");
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = async () => {
    await new Promise((resolve) => server.close(resolve));
    await router.close();
  };
});
afterAll(() => close());

it("serves the host app's own routes and modelmux under /ai", async () => {
  expect(await (await fetch(`${base}/`)).text()).toContain("host app");
  const client = new OpenAI({ baseURL: `${base}/ai/v1`, apiKey: "sk-example-test", maxRetries: 0 });
  const reply = await client.chat.completions.create({ model: "echo/echo-1", messages: [{ role: "user", content: "mounted" }] });
  expect(reply.choices[0]!.message.content).toBe("mounted");
});
