/**
 * The Node adapter: serves a request straight on `IncomingMessage`/`ServerResponse`. No web
 * `Request`, `Headers` or `AbortController` is made per request, the body is read from the socket's
 * chunks, and a reply leaves in as few writes as it can (a JSON reply, or a whole stream that
 * arrived in one upstream read, in one).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { isIPv4, type Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { bodyTooLarge } from "../errors.ts";
import type { Logger } from "../logger.ts";
import { logAccess } from "./access-log.ts";
import { replyThenDrain } from "./drain-request.ts";
import { CLIENT_CLOSED, errorReplyOf } from "./error-reply.ts";
import { BaseExchange, requestIdFor, type Exchange } from "./exchange.ts";
import { isValidHost } from "./public-origin.ts";
import { JSON_TYPE, type Reply, type SseReply } from "./reply.ts";

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

/** A body being read: its chunks so far, kept on the request while its listeners run. */
interface BodyRead {
  chunks: Buffer[];
  size: number;
  limit: number;
  resolve(body: Buffer): void;
  reject(error: unknown): void;
}

const kBodyRead = Symbol("modelmux.bodyRead");
type ReadingRequest = IncomingMessage & { [kBodyRead]?: BodyRead };

/**
 * Reads a request body into one Buffer, refusing it (413) as soon as it outgrows the limit. The
 * listeners are module functions reading their state from the request: nothing bound per request.
 */
function readNodeBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    (req as ReadingRequest)[kBodyRead] = { chunks: [], size: 0, limit, resolve, reject };
    req.on("data", onBodyData);
    req.on("end", onBodyEnd);
    req.on("error", onBodyError);
  });
}

/** Stops listening; returns the read it ends. */
function endBodyRead(req: ReadingRequest): BodyRead {
  const read = req[kBodyRead]!;
  req[kBodyRead] = undefined;
  req.off("data", onBodyData);
  req.off("end", onBodyEnd);
  req.off("error", onBodyError);
  return read;
}

function onBodyData(this: ReadingRequest, chunk: Buffer): void {
  const read = this[kBodyRead]!;
  read.size += chunk.length;
  if (read.size > read.limit) {
    endBodyRead(this);
    // Stop reading: the rest is never buffered, only drained once the 413 is out (drain-request.ts).
    this.pause();
    read.reject(bodyTooLarge(read.limit));
    return;
  }
  read.chunks.push(chunk);
}

function onBodyEnd(this: ReadingRequest): void {
  const { chunks, size, resolve } = endBodyRead(this);
  resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
}

function onBodyError(this: ReadingRequest, error: Error): void {
  endBodyRead(this).reject(error);
}

/**
 * Ends the body read in progress on `req`, if there is one, with `error`: the request's handler
 * then answers with it (the server's request timeout answers a slow body this way, in the
 * envelope). Returns false when no body is being read.
 */
export function failBodyRead(req: IncomingMessage, error: unknown): boolean {
  if (!(req as ReadingRequest)[kBodyRead]) return false;
  const read = endBodyRead(req as ReadingRequest);
  req.pause();
  read.reject(error);
  return true;
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

// SSE ----------------------------------------------------------------------------------------------

/** Text frames are written in batches of at most this many characters. */
const MAX_BATCH = 64 * 1024;

/**
 * Joins the text frames made in one tick and writes them with one `write()` at its end
 * (`process.nextTick` runs once the promise chain of an upstream read has settled): the frames of
 * one read (a dozen events or more) leave together, and no frame waits for a later read.
 */
class SseBatch {
  text = "";
  scheduled = false;
  /** The last write filled the socket's buffer: wait for 'drain' before reading on. */
  full = false;

  constructor(private readonly res: ServerResponse) {}

  push(text: string): void {
    this.text += text;
    if (this.text.length >= MAX_BATCH) this.flush();
    else this.schedule();
  }

  schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    process.nextTick(flushBatch, this);
  }

  flush(): void {
    this.scheduled = false;
    const { res } = this;
    if (res.writableEnded || res.destroyed) return;
    if (this.text === "") {
      // Nothing yet at the end of the first tick: the headers go alone, so the client sees the stream start.
      if (!res.headersSent) res.flushHeaders();
      return;
    }
    const text = this.text;
    this.text = "";
    if (!res.write(text)) this.full = true;
  }

  /** What is still batched, taken out (it leaves with the response's end). */
  take(): string {
    const text = this.text;
    this.text = "";
    return text;
  }
}

function flushBatch(batch: SseBatch): void {
  batch.flush();
}

function waitForDrain(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

/** Writes the frames as they come, with backpressure; the last batch leaves with the end, in one write. */
async function writeSse(logger: Logger, x: NodeExchange, res: ServerResponse, reply: SseReply): Promise<void> {
  const { frames } = reply;
  res.writeHead(200, { ...reply.headers, "x-request-id": x.requestId });
  const batch = new SseBatch(res);
  batch.schedule();
  let complete = false;
  try {
    for (;;) {
      if (res.destroyed) break;
      if (batch.full) {
        batch.full = false;
        if (res.writableNeedDrain) await waitForDrain(res);
        continue;
      }
      const { done, value } = await frames.next();
      if (done) break;
      if (typeof value === "string") batch.push(value);
      else {
        // Bytes relayed as they came: after the text before them, in order.
        batch.flush();
        if (!res.destroyed && !res.write(value)) batch.full = true;
      }
    }
    complete = true;
  } catch (error) {
    // The frames never throw by contract; one that does is a bug, logged, and the stream is ended.
    logger.error(`stream of ${x.method} ${x.path} failed`, { request_id: x.requestId }, error);
  } finally {
    // Releases the upstream when the client left early.
    if (!complete) await frames.return?.();
    const rest = batch.take();
    if (!res.destroyed && !res.writableEnded) res.end(rest === "" ? undefined : rest);
    logAccess(logger, x, 200);
  }
}
