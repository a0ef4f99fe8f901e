/** The routes on the h3 app: exact paths, decoded parameters, 405 with `allow`, 404, 400 — through both ways in. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/server/app.ts";
import { createNodeHandler } from "../src/server/node-entry.ts";
import { jsonReply } from "../src/server/reply.ts";
import type { Handler } from "../src/server/route-handlers.ts";
import { createLogger } from "../src/logger.ts";

const named =
  (name: string): Handler =>
  (x) =>
    jsonReply({ name, params: x.params });
const logger = createLogger({ level: "silent" });
const writing = { logger, writeTimeoutMs: 0 };
const app = createApp({
  ...writing,
  middleware: [],
  routes: [
    { path: "/v1/models", methods: { GET: named("models"), HEAD: named("models") } },
    { path: "/v1/things/:id", methods: { GET: named("thing"), DELETE: named("delete") } },
    { path: "/v1/things/:id/parts", methods: { GET: named("parts") } },
  ],
});

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer(createNodeHandler(app, writing));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

// The same cases through router.handler's way (a socket) and router.fetch's (a web Request).
const ways = {
  node: (path: string, method = "GET") => fetch(base + path, { method }),
  fetch: async (path: string, method = "GET") => app.fetch(new Request(`http://router.test${path}`, { method })),
};

describe.each(Object.entries(ways))("routes through %s", (_way, send) => {
  it("finds a path without parameters, and one with them, decoded", async () => {
    expect(await (await send("/v1/models")).json()).toEqual({ name: "models", params: {} });
    expect(await (await send("/v1/things/a%2Fb%20c", "DELETE")).json()).toEqual({ name: "delete", params: { id: "a/b c" } });
    expect(await (await send("/v1/things/x/parts")).json()).toEqual({ name: "parts", params: { id: "x" } });
  });

  it("answers 405 with the allowed methods in a fixed order for a known path", async () => {
    const refused = await send("/v1/things/x", "POST");
    expect(refused.status).toBe(405);
    expect(refused.headers.get("allow")).toBe("GET, DELETE");
    expect((await send("/v1/models", "DELETE")).headers.get("allow")).toBe("GET, HEAD");
    // HEAD is served only where a route says so.
    expect((await send("/v1/things/x", "HEAD")).status).toBe(405);
    expect((await send("/v1/models", "HEAD")).status).toBe(200);
  });

  it("answers 404 for an unknown path, an empty parameter, extra segments or a trailing slash", async () => {
    for (const path of ["/v1/nope", "/v1/things/", "/v1/things/x/parts/y", "/v1/models/", "/v1//models", "/"]) {
      const reply = await send(path);
      expect(reply.status, path).toBe(404);
      expect(((await reply.json()) as { error: { code: string } }).error.code).toBe("not_found");
    }
  });

  it("answers 400 for a parameter that is not valid percent-encoding", async () => {
    const reply = await send("/v1/things/%E0%A4%A");
    expect(reply.status).toBe(400);
    const { error } = (await reply.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe("invalid_request");
    expect(error.message).toContain("percent-encoding");
  });
});
