/**
 * The fake upstream of `npm run bench -- proxy`, run as its own process (`node --import tsx
 * bench/proxy/fake-upstream.ts`) so that it never shares the router's event loop. A node:http
 * server on 127.0.0.1 with fixed replies (`replies.ts`), written in one piece per reply:
 *
 * - `POST /v1/chat/completions`: OpenAI's JSON, or its SSE stream when the body asks for one;
 * - `POST /v1/messages`: Anthropic's JSON or SSE;
 * - `POST /v1/responses`: OpenAI's responses JSON or event stream;
 * - a chat stream for the model `hold` sends its first chunk and then waits for `POST /__release`,
 *   so that a thousand streams can be held open at once.
 *
 * It prints `{"port": N}` on stdout once it listens.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { REPLIES } from "./replies.ts";

const JSON_HEADERS = { "content-type": "application/json" };
const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" };

/** Held streams, waiting for `POST /__release`. */
let held: ServerResponse[] = [];

function reply(res: ServerResponse, stream: boolean, json: Buffer, sse: Buffer): void {
  if (stream) {
    // No content-length: chunked, as a real SSE reply is.
    res.writeHead(200, SSE_HEADERS);
    res.end(sse);
  } else {
    res.writeHead(200, { ...JSON_HEADERS, "content-length": json.length });
    res.end(json);
  }
}

function route(req: IncomingMessage, res: ServerResponse, body: string): void {
  // The bodies are small and fixed: a substring test is enough to tell the kinds apart.
  const stream = /"stream"\s*:\s*true/.test(body);
  switch (req.url) {
    case "/v1/chat/completions":
      if (stream && body.includes('"model":"hold"')) {
        res.writeHead(200, SSE_HEADERS);
        res.write(REPLIES.chatHead);
        held.push(res);
        return;
      }
      return reply(res, stream, REPLIES.chatJson, REPLIES.chatStream);
    case "/v1/messages":
      return reply(res, stream, REPLIES.messageJson, REPLIES.messageStream);
    case "/v1/responses":
      return reply(res, stream, REPLIES.responseJson, REPLIES.responseStream);
    case "/__release": {
      const released = held;
      held = [];
      for (const waiting of released) if (!waiting.destroyed) waiting.end(REPLIES.chatTail);
      res.writeHead(200, JSON_HEADERS);
      res.end(JSON.stringify({ released: released.length }));
      return;
    }
    default:
      res.writeHead(404, JSON_HEADERS);
      res.end('{"error":{"message":"not found","type":"invalid_request_error"}}');
  }
}

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  const parts: Buffer[] = [];
  req.on("data", (part: Buffer) => parts.push(part));
  req.on("end", () => route(req, res, Buffer.concat(parts).toString("utf8")));
});
server.maxConnections = 10_000;
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.on("SIGTERM", () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
