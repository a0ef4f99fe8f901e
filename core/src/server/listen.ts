/**
 * Serving a router on `node:http`, with the limits on what one client may hold
 * (`server.request_timeout`, `server.max_connections`; `server.write_timeout` is the handler's own),
 * `Expect: 100-continue` answered only for a body that is read, and the graceful stop (README "Configuration", Stopping):
 * stop accepting, answer no new request, let in-flight requests and streams finish (bounded by
 * `server.shutdown_timeout`), close plugins. README "Configuration" says what a client sees of each.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { expectationFailed, invalidRequest } from "../errors.ts";
import { InFlightReplies } from "./in-flight-replies.ts";
import { deferContinue } from "./node-expect-continue.ts";
import { createClientErrorListener, refuse } from "./node-refusals.ts";
import type { Router } from "../router.ts";

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
/**
 * The longest a client has for a request's headers (less when `server.request_timeout` is less).
 * Headers are a few hundred bytes to a few KB, one or two packets that any client sends within
 * milliseconds of connecting or of deciding to send; the only clients that take seconds are those
 * that open a connection and send nothing, or drip their headers, and each holds one of
 * `server.max_connections` while it does. 10 s still covers a slow link that loses a packet three
 * times (TCP retransmits after 1, 2 and 4 s), and frees such a connection six times sooner than the
 * default 60 s request_timeout would.
 */
const HEADERS_TIMEOUT_MS = 10_000;
/** A refused connection past `server.max_connections` is logged at most this often. */
const DROP_WARNING_MS = 60_000;
/**
 * At the cap, idle keep-alive connections are closed at most this often: each time walks every open
 * connection, which a flood of refused connections must not turn into a loop.
 */
const RECLAIM_IDLE_MS = 100;

/** A reply not yet begun says the connection ends with it. */
function closeAfterReply(res: ServerResponse): void {
  if (!res.headersSent) res.setHeader("connection", "close");
}

/**
 * Serves `router` on `listen` until `stop()`.
 * @throws the listen error (`EADDRINUSE`, `EACCES`…) when the address cannot be bound
 */
export async function startServer(router: Router, listen: { host: string; port: number }): Promise<RunningServer> {
  const { requestTimeoutMs, writeTimeoutMs, maxConnections, shutdownTimeoutMs } = router.settings;
  // 0 (no request_timeout) is no limit on headers either.
  const headersTimeoutMs = Math.min(requestTimeoutMs, HEADERS_TIMEOUT_MS);
  const inFlight = new InFlightReplies();
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
  const onRequest = function onRequest(req: IncomingMessage, res: ServerResponse) {
    if (stopping) {
      // A request that came after the signal is not served: its connection is closed unanswered,
      // which a client may retry elsewhere (unless it waits behind a reply still in flight).
      res.socket?.destroy();
      return;
    }
    if (req.httpVersionMinor === 1 && req.httpVersionMajor === 1 && req.headers.host === undefined) {
      // RFC 9112 §3.2: an HTTP/1.1 request without Host is a 400.
      refuse(res, invalidRequest("An HTTP/1.1 request must have a Host header: send one.", { code: "invalid_request" }), writeTimeoutMs, req.headers["x-request-id"]);
      return;
    }
    inFlight.add(res);
    // 'close' is emitted once per response, so `on` does what `once` would without its wrapper.
    res.on("close", requestDone);
    router.handler(req, res);
  };
  const server = createServer(
    {
      keepAliveTimeout: 65_000,
      // node:http reports a request not received in time (its headers within headersTimeout, all of
      // it within requestTimeout, from its first byte or from the connection's start) through
      // 'clientError' below.
      requestTimeout: requestTimeoutMs,
      headersTimeout: headersTimeoutMs,
      connectionsCheckingInterval: TIMEOUT_CHECK_MS,
      // Checked below, the same one check, to answer in the envelope.
      requireHostHeader: false,
    },
    onRequest,
  );
  server.maxConnections = maxConnections;
  server.on("clientError", createClientErrorListener(router.logger, { requestTimeoutMs, headersTimeoutMs }));
  // Without this listener node:http answers a bare 417.
  server.on("checkExpectation", (req: IncomingMessage, res: ServerResponse) => refuse(res, expectationFailed(), writeTimeoutMs, req.headers["x-request-id"]));
  // Without this listener node:http writes `100 Continue` before the router has looked at the
  // request, and the client uploads a body that may be refused unread (no key, over body_limit).
  server.on("checkContinue", (req: IncomingMessage, res: ServerResponse) => {
    deferContinue(req, res);
    onRequest(req, res);
  });
  let lastDropWarning = -Infinity;
  let lastReclaim = -Infinity;
  server.on("drop", () => {
    const now = performance.now();
    // Idle keep-alive connections hold slots for up to 65 s: at the cap they give way to new ones
    // (a client reconnects for its next request, as after any keep-alive timeout).
    if (now - lastReclaim >= RECLAIM_IDLE_MS) {
      lastReclaim = now;
      server.closeIdleConnections();
    }
    if (now - lastDropWarning < DROP_WARNING_MS) return;
    lastDropWarning = now;
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
      // A reply begun (a stream) cannot say it; its connection is closed when it finishes (requestDone).
      inFlight.forEach(closeAfterReply);
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
