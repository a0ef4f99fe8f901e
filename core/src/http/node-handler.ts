/**
 * The Node adapter: serves a request straight on `IncomingMessage`/`ServerResponse`. No web
 * `Request`, `Headers` or `AbortController` is made per request, the body is read from the socket's
 * chunks (`node-request-body.ts`), and a reply leaves in as few writes as it can: a JSON reply in
 * one, a stream batched per tick (`node-sse-reply.ts`).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { isIPv4, type Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import type { Logger } from "../logger.ts";
import { logAccess } from "./access-log.ts";
import { replyThenDrain } from "./drain-request.ts";
import { CLIENT_CLOSED, errorReplyOf } from "./error-reply.ts";
import { BaseExchange, requestIdFor, type Exchange } from "./exchange.ts";
import { readNodeBody } from "./node-request-body.ts";
import { writeSse } from "./node-sse-reply.ts";
import { isValidHost } from "./public-origin.ts";
import { JSON_TYPE, type Reply } from "./reply.ts";

/** What the adapter needs of the router. */
export interface NodeAdapterContext {
  /** Authenticates, routes and runs the endpoint (`dispatch.ts`); throws for an error reply. */
  dispatch(x: Exchange): Promise<Reply>;
  logger: Logger;
}

const kExchange = Symbol("modelmux.exchange");
type TaggedResponse = ServerResponse & { [kExchange]?: NodeExchange };

/** `address:port` the connection was accepted on, as a URL authority (`[::1]:8080`, `127.0.0.1:8080`). */
function localAuthority(socket: Socket): string {
  const address = socket.localAddress;
  if (address === undefined) return "localhost";
  const plain = address.startsWith("::ffff:") && isIPv4(address.slice(7)) ? address.slice(7) : address;
  return `${plain.includes(":") ? `[${plain}]` : plain}:${socket.localPort}`;
}

/** One request on node:http. */
class NodeExchange extends BaseExchange {
  constructor(
    readonly req: IncomingMessage,
    method: string,
    path: string,
    search: string,
    requestId: string,
  ) {
    super(method, path, search, requestId, performance.now());
  }

  get origin(): string {
    const scheme = (this.req.socket as TLSSocket).encrypted ? "https" : "http";
    const host = this.req.headers.host;
    // A Host that is not a plain host[:port] (`evil.example/phish?x=`) never reaches a URL: the
    // address the client connected to is used instead, which is this router's own.
    return `${scheme}://${host !== undefined && isValidHost(host) ? host : localAuthority(this.req.socket)}`;
  }

  get peerAddress(): string | undefined {
    return this.req.socket.remoteAddress;
  }

  header(name: string): string | undefined {
    const value = this.req.headers[name];
    return Array.isArray(value) ? value.join(", ") : value;
  }

  readBody(limit: number): Promise<Buffer> {
    return readNodeBody(this.req, limit);
  }
}


/** Once per response: a close before the reply finished is a client that went away. */
function onResponseClose(this: TaggedResponse): void {
  const x = this[kExchange];
  if (x && !this.writableFinished) x.abort.abort();
}

/**
 * Creates the `(req, res)` handler of a router.
 * @example http.createServer(createNodeHandler({ dispatch, logger }))
 */
export function createNodeHandler(app: NodeAdapterContext): (req: IncomingMessage, res: ServerResponse) => void {
  return function handleNodeRequest(req, res) {
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const given = req.headers["x-request-id"];
    const x = new NodeExchange(req, req.method ?? "GET", q < 0 ? url : url.slice(0, q), q < 0 ? "" : url.slice(q), requestIdFor(typeof given === "string" ? given : undefined));
    (res as TaggedResponse)[kExchange] = x;
    res.on("close", onResponseClose);
    app.dispatch(x).then(
      (reply) => writeReply(app.logger, x, res, reply),
      (error: unknown) => writeError(app.logger, x, res, error),
    );
  };
}

function writeReply(logger: Logger, x: NodeExchange, res: ServerResponse, reply: Reply): void {
  if (res.destroyed) {
    // The client left while the reply was made: nobody reads it. A stream still releases its source.
    if (reply.kind === "sse") void reply.frames.return?.();
    logAccess(logger, x, CLIENT_CLOSED);
    return;
  }
  try {
    if (reply.kind === "sse") {
      void writeSse(logger, x, res, reply);
      return;
    }
    const headers: Record<string, string | number> =
      reply.kind === "json" ? { "content-type": JSON_TYPE, "content-length": Buffer.byteLength(reply.body) } : {};
    if (reply.headers) Object.assign(headers, reply.headers);
    if (reply.kind === "bytes" && reply.body && headers["content-length"] === undefined) headers["content-length"] = reply.body.length;
    headers["x-request-id"] = x.requestId;
    res.writeHead(reply.status, headers);
    res.end(reply.body ?? undefined);
    logAccess(logger, x, reply.status);
  } catch (error) {
    // writeHead refuses a header value a plugin made (a line break): a bug, answered as a 500.
    writeError(logger, x, res, error);
  }
}

function writeError(logger: Logger, x: NodeExchange, res: ServerResponse, error: unknown): void {
  const { status, headers, body } = errorReplyOf(error, x, logger);
  if (!res.headersSent && !res.destroyed) {
    // A body refused while the client still sends it: the reply must reach the client first.
    if (status === 413 && body !== null && !x.req.complete) replyThenDrain(x.req, res, status, headers, body);
    else {
      res.writeHead(status, headers);
      res.end(body ?? undefined);
    }
  } else if (!res.writableEnded) res.end();
  logAccess(logger, x, status);
}
