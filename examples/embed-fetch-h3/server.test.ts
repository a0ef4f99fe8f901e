import OpenAI from "openai";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Router } from "@modelmux/core";
import { createHostApp } from "./server.ts";

let app: Awaited<ReturnType<typeof createHostApp>>["app"];
let router: Router;

beforeAll(async () => {
  ({ app, router } = await createHostApp("sk-fetch-example"));
});
afterAll(() => router.close());

// The SDK talks to the host app's own fetch handler: no port, as in a serverless or edge runtime.
const client = () =>
  new OpenAI({ baseURL: "http://host.test/llm/v1", apiKey: "sk-fetch-example", maxRetries: 0, fetch: (input, init) => Promise.resolve(app.fetch(new Request(input, init))) });

it("serves the host's routes and modelmux under /llm through one fetch handler", async () => {
  expect(await (await app.fetch(new Request("http://host.test/"))).json()).toEqual({ app: "the host's own API" });
  const reply = await client().chat.completions.create({ model: "echo/echo-1", messages: [{ role: "user", content: "via fetch" }] });
  expect(reply.choices[0]!.message.content).toBe("via fetch");
});

it("streams through the mounted fetch handler", async () => {
  const stream = await client().chat.completions.create({ model: "echo/echo-1", stream: true, messages: [{ role: "user", content: "streamed through a mount" }] });
  let text = "";
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
  expect(text).toBe("streamed through a mount");
});
