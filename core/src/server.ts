/**
 * Serving a router on `node:http`, with the limits on what one client may hold
 * (`server.request_timeout`, `server.max_connections`) and the graceful stop of contract §2: stop
 * accepting, answer no new request, let in-flight requests and streams finish (bounded by
 * `server.shutdown_timeout`), close plugins. README "Configuration" says what a client sees of each.
 */
import { randomUUID } from "node:crypto";
import { createServer, STATUS_CODES, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { requestTimedOut } from "./errors.ts";
import { failBodyRead } from "./http/node-request-body.ts";
import type { Router } from "./router.ts";

export interface RunningServer {
  server: Server;
  /** `http://host:port`, with the port actually bound. */
  url: string;
  /**
   * Stops gracefully: closes the listener and idle connections, answers no new request, lets the
   * requests in flight finish (their replies say `connection: close`), then closes every
   * connection and the router's plugins. Resolves when everything is closed.
   */
  stop(): Promise<void>;
}

/** How often node:http looks for a request not received in time (its default is every 30 s). */
const TIMEOUT_CHECK_MS = 1_000;
/** A refused connection past `server.max_connections` is logged at most this often. */
const DROP_WARNING_MS = 60_000;

/** The socket of a connection as node:http keeps it: the response being written on it, if any. */
type HttpSocket = Socket & { _httpMessage?: ServerResponse | null };

/**
 * Serves `router` on `listen` until `stop()`.
 * @throws the listen error (`EADDRINUSE`, `EACCES`…) when the address cannot be bound
 */
export async function startServer(router: Router, listen: { host: string; port: number }): Promise<RunningServer> {
  const { requestTimeoutMs, maxConnections, shutdownTimeoutMs } = router.settings;
  const inFlight = new Set<ServerResponse>();
  let stopping = false;
  let drained: (() => void) | undefined;
  // One listener for every response, made once: a closure per request costs an allocation (and,
  // under tsx, a defineProperty for its name) on the hot path.
  const requestDone = function requestDone(this: ServerResponse) {
    inFlight.delete(this);
    if (!stopping) return;
    // The connection this reply leaves idle takes no other request.
    server.closeIdleConnections();
    if (inFlight.size === 0) drained?.();
  };
  const server = createServer(
    {
      keepAliveTimeout: 65_000,
      // node:http answers a request that is not all received in time (headers and body, from its
      // first byte or from the connection's start) through 'clientError' below.
      requestTimeout: requestTimeoutMs,
      headersTimeout: requestTimeoutMs,
      connectionsCheckingInterval: TIMEOUT_CHECK_MS,
    },
    (req, res) => {
      if (stopping) {
        // A request that came after the signal is not served: its connection is closed unanswered,
        // which a client may retry elsewhere (unless it waits behind a reply still in flight).
        res.socket?.destroy();
        return;
      }
      inFlight.add(res);
      // 'close' is emitted once per response, so `on` does what `once` would without its wrapper.
      res.on("close", requestDone);
      router.handler(req, res);
    },
  );
  server.maxConnections = maxConnections;
  server.on("clientError", (error: NodeJS.ErrnoException, duplex) => {
    const socket = duplex as HttpSocket;
    const res = socket._httpMessage;
    if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
      const timedOut = requestTimedOut(requestTimeoutMs);
      // A body being read: its handler answers the 408 and closes the connection.
      if (res && !res.headersSent && failBodyRead(res.req, timedOut)) return;
      const requestId = randomUUID();
      router.logger.debug(`closed a connection that sent no whole request within ${requestTimeoutMs} ms (server.request_timeout)`, { request_id: requestId });
      if (socket.writable && !res?.headersSent) socket.write(rawErrorReply(408, { envelope: JSON.stringify(timedOut.toEnvelope()), requestId }));
    } else if (socket.writable && !res?.headersSent && error.code !== "ECONNRESET") {
      // What node:http answers itself without a 'clientError' listener.
      socket.write(rawErrorReply(error.code === "HPE_HEADER_OVERFLOW" ? 431 : error.code === "HPE_CHUNK_EXTENSIONS_OVERFLOW" ? 413 : 400));
    }
    socket.destroy();
  });
  let lastDropWarning = -Infinity;
  server.on("drop", () => {
    if (performance.now() - lastDropWarning < DROP_WARNING_MS) return;
    lastDropWarning = performance.now();
    router.logger.warn(`refusing connections: ${maxConnections} are open (server.max_connections)`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(listen.port, listen.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(":") ? `[${address}]` : address;

  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      stopping = true;
      // Stops listening and closes the connections idle between requests.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // A reply not yet begun says the connection ends with it; one begun (a stream) cannot, and
      // its connection is closed when it finishes (requestDone).
      for (const res of inFlight) if (!res.headersSent) res.setHeader("connection", "close");
      if (inFlight.size > 0) {
        let timer: NodeJS.Timeout | undefined;
        const finished = new Promise<void>((resolve) => (drained = resolve));
        const timeout = new Promise<"timeout">((resolve) => (timer = setTimeout(resolve, shutdownTimeoutMs, "timeout")));
        if ((await Promise.race([finished, timeout])) === "timeout") {
          router.logger.warn(`stopped waiting for ${inFlight.size} in-flight request(s) after ${shutdownTimeoutMs} ms`);
        }
        clearTimeout(timer);
      }
      server.closeAllConnections();
      await closed;
      await router.close();
    })());

  return { server, url: `http://${host}:${port}`, stop };
}

/** A reply written straight to a socket, for a request node:http never handed to the router. */
function rawErrorReply(status: number, error?: { envelope: string; requestId: string }): string {
  const head = `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nconnection: close\r\n`;
  if (!error) return `${head}\r\n`;
  const { envelope, requestId } = error;
  return `${head}content-type: application/json\r\ncontent-length: ${Buffer.byteLength(envelope)}\r\nx-request-id: ${requestId}\r\n\r\n${envelope}`;
}
