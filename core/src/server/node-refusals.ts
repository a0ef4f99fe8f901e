/**
 * The replies to what node:http refuses before the router sees a request (README "Errors"): bytes
 * that are not HTTP, headers or chunk extensions past node's limits, a request not received within
 * `server.request_timeout`, an HTTP/1.1 request without `Host`, an `Expect` other than
 * `100-continue`. Each is answered in the error envelope with an `x-request-id`, as every reply is,
 * and closes its connection; node's own answers to them are bare status lines.
 */
import { maxHeaderSize, STATUS_CODES, type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { Socket } from "node:net";
import { chunkExtensionsTooLarge, headersTimedOut, headersTooLarge, invalidRequest, requestTimedOut, type ModelmuxError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import { requestIdFor } from "./middleware/request-id.ts";
import { endWritten } from "./node-reply-stall.ts";
import { failBodyRead } from "./node-request-body.ts";
import { JSON_TYPE } from "./reply.ts";

/** What node:http reads of one chunk's extensions (fixed in node, not configurable). */
const MAX_CHUNK_EXTENSIONS = 16 * 1024;

/**
 * A connection's socket as node:http keeps it: the response being written on it, if any, and its
 * parser, whose `incoming` is the request being received once its headers are in (node resets it
 * once that request's body has ended and its reply is done).
 */
type HttpSocket = Socket & {
  _httpMessage?: ServerResponse | null;
  parser?: { incoming: IncomingMessage | null } | null;
};

/** The reply to a refused request: status, headers (`connection: close` among them) and envelope. */
function refusalOf(error: ModelmuxError, requestId: string): { status: number; headers: Record<string, string | number>; body: string } {
  const body = JSON.stringify(error.toEnvelope());
  const headers = { "content-type": JSON_TYPE, "content-length": Buffer.byteLength(body), ...error.headers, connection: "close", "x-request-id": requestId };
  return { status: error.status, headers, body };
}

/**
 * Answers `error` on a response the router never got, which closes its connection once its client
 * has the reply (or has taken none of it for `writeTimeoutMs`, `server.write_timeout`).
 */
export function refuse(res: ServerResponse, error: ModelmuxError, writeTimeoutMs: number, given?: string | string[]): void {
  const { status, headers, body } = refusalOf(error, requestIdFor(typeof given === "string" ? given : undefined));
  res.writeHead(status, headers);
  void endWritten(res, body, writeTimeoutMs);
}

/** The one writer of a reply straight to a socket, for a request node:http never handed on. */
function writeRawRefusal(socket: Socket, error: ModelmuxError, requestId: string): void {
  const { status, headers, body } = refusalOf(error, requestId);
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n`;
  for (const name in headers) head += `${name}: ${headers[name]}\r\n`;
  socket.write(`${head}\r\n${body}`);
}

/** The time limits node:http enforces on receiving a request. */
export interface RequestTimeouts {
  /** `server.request_timeout`: headers and body. */
  requestTimeoutMs: number;
  /** The headers alone; at most `requestTimeoutMs`. */
  headersTimeoutMs: number;
}

/** The error a node:http client error is answered with; `headersIn` says whether the request's headers had all come. */
function errorOf(error: NodeJS.ErrnoException & { reason?: string }, timeouts: RequestTimeouts, headersIn: boolean): ModelmuxError {
  switch (error.code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return !headersIn && timeouts.headersTimeoutMs < timeouts.requestTimeoutMs
        ? headersTimedOut(timeouts.headersTimeoutMs)
        : requestTimedOut(timeouts.requestTimeoutMs);
    case "HPE_HEADER_OVERFLOW":
      return headersTooLarge(maxHeaderSize);
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return chunkExtensionsTooLarge(MAX_CHUNK_EXTENSIONS);
    default:
      // `reason` is llhttp's fixed description of the rule broken ("Invalid method encountered"),
      // never the client's bytes.
      const reason = error.reason ? ` (${error.reason})` : "";
      return invalidRequest(`The request could not be read as HTTP/1.1${reason}; the connection is closed.`, { code: "invalid_request" });
  }
}

/**
 * The `clientError` listener of a router's node:http server: answers the request being received
 * in the envelope, unless its reply is already out, and closes the connection.
 */
export function createClientErrorListener(logger: Logger, timeouts: RequestTimeouts): (error: NodeJS.ErrnoException, duplex: Duplex) => void {
  return function onClientError(error, duplex) {
    const socket = duplex as HttpSocket;
    const res = socket._httpMessage;
    const incoming = socket.parser?.incoming;
    // A request whose headers are in and whose body is still arriving; none while headers arrive.
    const receiving = incoming != null && !incoming.complete ? incoming : undefined;
    // The request being received already has its reply: begun (a response on the socket that has
    // sent its head), or done and detached while its body still arrives (a 401 sent before reading
    // a body). A keep-alive client would read anything written now as the reply to its next request.
    const answered = res ? res.headersSent : receiving !== undefined;
    const refusal = errorOf(error, timeouts, receiving !== undefined);
    // A body being read: its handler answers the 408 in the envelope, logs it, and closes the connection.
    if (error.code === "ERR_HTTP_REQUEST_TIMEOUT" && res && !answered && failBodyRead(res.req, refusal)) return;
    if (!answered && socket.writable && error.code !== "ECONNRESET") {
      const given = receiving?.headers["x-request-id"];
      const requestId = requestIdFor(typeof given === "string" ? given : undefined);
      logger.debug(`refused a request before routing it: ${refusal.status} ${refusal.code}`, { request_id: requestId });
      writeRawRefusal(socket, refusal, requestId);
    }
    socket.destroy();
  };
}
