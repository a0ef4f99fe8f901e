/**
 * Another h3 v2 app that mounts modelmux's own h3 app (`router.app`) under /llm next to its own
 * routes. Hono, Bun or Deno take `router.fetch` instead: `app.mount("/llm", { fetch: router.fetch })`
 * in h3 does the same through the fetch handler.
 * Run: npx tsx examples/embed-fetch-h3/server.ts, then
 *   curl -H "Authorization: Bearer sk-example" http://127.0.0.1:3001/llm/v1/models
 */
import { H3 } from "h3";
import { serve } from "h3/node";
import { createRouter } from "@modelmux/core";

export async function createHostApp(apiKey = process.env.MODELMUX_API_KEY ?? "sk-example") {
  const router = await createRouter({
    logging: { level: "warn" },
    auth: { api_keys: [{ key: apiKey, app: "host", developer: "me" }] },
    providers: { echo: { plugin: "provider-echo", models: ["echo-1"] } },
  });
  const app = new H3();
  app.get("/", () => ({ app: "the host's own API" }));
  // h3 strips the mount base while modelmux's middleware run, so modelmux sees /v1/... as usual.
  app.mount("/llm", router.app);
  return { app, router };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { app } = await createHostApp();
  serve(app, { port: 3001, hostname: "127.0.0.1" });
}
