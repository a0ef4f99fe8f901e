/**
 * Serving a router on `node:http`, with the graceful stop of contract §2: stop accepting, let
 * in-flight requests and streams finish (bounded by `server.shutdown_timeout`), close plugins.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Router } from "./router.ts";

export interface RunningServer {
  server: Server;
  /** `http://host:port`, with the port actually bound. */
  url: string;
  /** Stops gracefully; resolves when everything is closed. */
  stop(): Promise<void>;
}

export async function startServer(router: Router, listen: { host: string; port: number }): Promise<RunningServer> {
  let inFlight = 0;
  let idle: (() => void) | undefined;
  // One listener for every response, made once: a closure per request costs an allocation (and,
  // under tsx, a defineProperty for its name) on the hot path.
  const requestDone = () => {
    if (--inFlight === 0) idle?.();
  };
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    inFlight++;
    // 'close' is emitted once per response, so `on` does what `once` would without its wrapper.
    res.on("close", requestDone);
    router.handler(req, res);
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

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const drained = inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => (idle = resolve));
      const timeout = new Promise<"timeout">((resolve) => setTimeout(resolve, router.settings.shutdownTimeoutMs, "timeout").unref());
      if ((await Promise.race([drained, timeout])) === "timeout") {
        router.logger.warn(`stopped waiting for ${inFlight} in-flight request(s) after ${router.settings.shutdownTimeoutMs} ms`);
      }
      server.closeAllConnections();
      await closed;
      await router.close();
    })());

  return { server, url: `http://${host}:${port}`, stop };
}
