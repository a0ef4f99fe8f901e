/**
 * The practical ceiling of the proxy benchmark: a Node proxy that only copies bytes, run as its own
 * process like the routers (`node --import tsx bench/proxy/node-proxy.ts <upstream>`). It reads a
 * request, sends it to the upstream as it came (undici, keep-alive) and writes the reply back chunk
 * by chunk: no parsing, no validation, no logging. What it costs is what node:http and undici cost
 * on this machine, which no router written on them can go below.
 *
 * It prints `{"port": N}` on stdout once it listens on 127.0.0.1.
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent } from "undici";

const upstream = new URL(process.argv[2] ?? "");
if (upstream.hostname !== "127.0.0.1") throw new Error(`node-proxy: the upstream must be on 127.0.0.1, got ${process.argv[2]}`);
const agent = new Agent({ keepAliveTimeout: 30_000, connections: null, pipelining: 1 });

/** Hop-by-hop headers stay on their own hop (undici refuses them anyway). */
const HOP_BY_HOP = new Set(["host", "connection", "keep-alive", "transfer-encoding", "upgrade", "expect", "content-length"]);

function forwardable(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in headers) {
    const value = headers[name];
    if (!HOP_BY_HOP.has(name) && typeof value === "string") out[name] = value;
  }
  return out;
}

const server = createServer({ keepAliveTimeout: 65_000 }, async (req, res) => {
  try {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    const reply = await agent.request({
      origin: upstream.origin,
      path: req.url ?? "/",
      method: (req.method ?? "GET") as "POST",
      headers: forwardable(req.headers),
      body: Buffer.concat(parts),
    });
    const type = reply.headers["content-type"];
    res.writeHead(reply.statusCode, typeof type === "string" ? { "content-type": type } : {});
    for await (const chunk of reply.body) res.write(chunk);
    res.end();
  } catch (error) {
    if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
    res.end(`node-proxy: ${(error as Error).message}`);
  }
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.on("SIGTERM", () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
