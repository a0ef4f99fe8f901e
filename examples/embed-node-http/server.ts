/**
 * An existing node:http app that mounts modelmux under /ai, with its config written in code.
 * Run: npx tsx examples/embed-node-http/server.ts, then
 *   curl -H "Authorization: Bearer sk-example" http://127.0.0.1:3000/ai/v1/models
 */
import { createServer, type Server } from "node:http";
import { createRouter, type Router } from "@modelmux/core";

export async function createExampleServer(apiKey = process.env.MODELMUX_API_KEY ?? "sk-example"): Promise<{ server: Server; router: Router }> {
  const router = await createRouter({
    logging: { level: "warn" },
    auth: { api_keys: [{ key: apiKey, app: "example", developer: "me" }] },
    providers: { echo: { plugin: "provider-echo", models: ["echo-1"] } },
  });
  const server = createServer((req, res) => {
    if (req.url?.startsWith("/ai/")) {
      // The router sees its own paths: strip the mount prefix.
      req.url = req.url.slice("/ai".length);
      return router.handler(req, res);
    }
    res.writeHead(200, { "content-type": "text/plain" }).end("the host app's own page\n");
  });
  return { server, router };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { server } = await createExampleServer();
  server.listen(3000, "127.0.0.1", () => console.log("host app on http://127.0.0.1:3000, modelmux under /ai"));
}
