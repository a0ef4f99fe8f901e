/**
 * The practical ceiling of the proxy benchmark: a Node proxy that only copies bytes, run as its own
 * process like the routers (`node --import tsx bench/proxy/node-proxy.ts <upstream>`). It reads a
 * request, sends it to the upstream as it came and writes the reply back as it arrives, with the
 * cheapest parts node:http and undici offer: undici's `dispatch()` with a raw handler (no stream
 * or promise per reply), the reply's bytes of one tick written with one `write()`. No parsing, no
 * validation, no logging: what it costs is what node:http and undici cost on this machine, which
 * no router written on them can go below.
 *
 * With `--json` it is the ceiling of a router that reads JSON: it also parses and re-serialises each
 * request body (as a router does to check it and rewrite its model) and parses each JSON reply (as
 * a router does to read its usage), then sends the reply's own bytes; streams are still copied.
 *
 * It prints `{"port": N}` on stdout once it listens on 127.0.0.1.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent, type Dispatcher } from "undici";

const upstream = new URL(process.argv[2] ?? "");
const JSON_MODE = process.argv.includes("--json");
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

/** Copies one upstream reply to the client as undici parses it. */
class CopyReply implements Dispatcher.DispatchHandler {
  private corked = false;
  /** In `--json` mode, a JSON reply's bytes, parsed once complete. */
  private json: Buffer[] | undefined;

  constructor(private readonly res: ServerResponse) {}

  onConnect(): void {}

  onHeaders(status: number, raw: Buffer[]): boolean {
    const headers: Record<string, string> = {};
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]!.toString("latin1").toLowerCase();
      if (name === "content-type" || name === "content-length") headers[name] = raw[i + 1]!.toString("latin1");
    }
    if (JSON_MODE && headers["content-type"]?.startsWith("application/json")) this.json = [];
    this.res.writeHead(status, headers);
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.json?.push(chunk);
    // The bytes of one tick (often the whole reply) leave in one write, with the headers.
    if (!this.corked) {
      this.corked = true;
      this.res.cork();
      process.nextTick(uncork, this);
    }
    this.res.write(chunk);
    return true;
  }

  uncork(): void {
    this.corked = false;
    this.res.uncork();
  }

  onComplete(): void {
    if (this.json) JSON.parse(Buffer.concat(this.json).toString("utf8"));
    this.res.end();
  }

  onError(error: Error): void {
    if (!this.res.headersSent) this.res.writeHead(502, { "content-type": "text/plain" });
    this.res.end(`node-proxy: ${error.message}`);
  }
}

function uncork(reply: CopyReply): void {
  reply.uncork();
}

function forward(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
  agent.dispatch(
    { origin: upstream.origin, path: req.url ?? "/", method: (req.method ?? "GET") as Dispatcher.HttpMethod, headers: forwardable(req.headers), body },
    new CopyReply(res),
  );
}

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  const parts: Buffer[] = [];
  req.on("data", (part: Buffer) => parts.push(part));
  req.on("end", () => {
    const body = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    forward(req, res, JSON_MODE ? Buffer.from(JSON.stringify(JSON.parse(body.toString("utf8")))) : body);
  });
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.on("SIGTERM", () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
