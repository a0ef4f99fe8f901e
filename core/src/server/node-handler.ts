/**
 * The Node adapter: serves a request straight on `IncomingMessage`/`ServerResponse`. No web
 * `Request`, `Headers` or `AbortController` is made per request, the body is read from the socket's
 * chunks (`node-request-body.ts`), and a reply leaves in as few writes as it can: a JSON reply in
 * one, a stream batched per tick (`node-sse-reply.ts`). A client that stops taking its reply is
 * closed after `server.write_timeout` (`node-reply-stall.ts`).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { isIPv4, type Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import type { Logger } from "../logger.ts";
import { logAccess } from "./access-log.ts";
import { replyThenDrain } from "./node-drain-request.ts";
import { CLIENT_CLOSED, errorReplyOf } from "./error-reply.ts";
import { BaseExchange, requestIdFor, type Exchange } from "./exchange.ts";
import { endWritten, WRITE_PIECE_BYTES, WRITE_TIMEOUT_CLOSED, writeBody } from "./node-reply-stall.ts";
import { awaitingContinue } from "./node-expect-continue.ts";
import { readNodeBody } from "./node-request-body.ts";
import { writeSse } from "./node-sse-reply.ts";
import { isValidHost } from "./public-origin.ts";
import { JSON_TYPE, type Reply } from "./reply.ts";

/** What the adapter needs of the router. */
export interface NodeAdapterContext {
  /** Authenticates, routes and runs the endpoint (`auth-and-route.ts`); throws for an error reply. */
  dispatch(x: Exchange): Promise<Reply>;
  logger: Logger;
  /** `server.write_timeout`: how long a reply may wait for its client to take more of it; 0 is no limit. */
  writeTimeoutMs: number;
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
      (reply) => writeReply(app, x, res, reply),
      (error: unknown) => writeError(app, x, res, error),
    );
  };
}

function writeReply(app: NodeAdapterContext, x: NodeExchange, res: ServerResponse, reply: Reply): void {
  const { logger } = app;
  if (res.destroyed) {
    // The client left while the reply was made: nobody reads it. A stream still releases its source.
    if (reply.kind === "sse") void reply.frames.return?.();
    logAccess(logger, x, CLIENT_CLOSED);
    return;
  }
  try {
    if (reply.kind === "sse") {
      void writeSse(logger, x, res, reply, app.writeTimeoutMs);
      return;
    }
    const { body } = reply;
    const length = reply.kind === "json" ? Buffer.byteLength(reply.body) : (body?.length ?? 0);
    const headers: Record<string, string | number> = reply.kind === "json" ? { "content-type": JSON_TYPE, "content-length": length } : {};
    if (reply.headers) Object.assign(headers, reply.headers);
    if (reply.kind === "bytes" && body && headers["content-length"] === undefined) headers["content-length"] = length;
    headers["x-request-id"] = x.requestId;
    res.writeHead(reply.status, headers);
    if (length <= WRITE_PIECE_BYTES) endReply(app, x, res, reply.status, body ?? undefined);
    else void writeBody(res, body!, app.writeTimeoutMs).then((written) => logEnd(logger, x, reply.status, written));
  } catch (error) {
    // writeHead refuses a header value a plugin made (a line break): a bug, answered as a 500.
    writeError(app, x, res, error);
  }
}

/** Ends a reply whose head is written with its whole (small) body, and logs it once the client has it. */
function endReply(app: NodeAdapterContext, x: NodeExchange, res: ServerResponse, status: number, body: string | Buffer | undefined): void {
  const written = endWritten(res, body, app.writeTimeoutMs);
  // The kernel took it all (every reply to a client that reads): logged now, no promise made.
  if (written === true) logAccess(app.logger, x, status);
  else void written.then((taken) => logEnd(app.logger, x, status, taken));
}

function logEnd(logger: Logger, x: NodeExchange, status: number, written: boolean): void {
  logAccess(logger, x, status, written ? undefined : WRITE_TIMEOUT_CLOSED);
}

function writeError(app: NodeAdapterContext, x: NodeExchange, res: ServerResponse, error: unknown): void {
  const { logger } = app;
  const { status, headers, body } = errorReplyOf(error, x, logger);
  if (!res.headersSent && !res.destroyed) {
    // A body refused while the client still sends it: the reply must reach the client first. One
    // refused before its `100 Continue` was never sent: there is nothing to drain.
    if (status === 413 && body !== null && !x.req.complete && !awaitingContinue(x.req)) replyThenDrain(x.req, res, status, headers, body, app.writeTimeoutMs);
    else {
      res.writeHead(status, headers);
      endReply(app, x, res, status, body ?? undefined);
      return;
    }
  } else if (!res.writableEnded) res.end();
  logAccess(logger, x, status);
}
