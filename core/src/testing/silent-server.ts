/**
 * A TCP server on 127.0.0.1 that accepts connections and never answers: what a hung backend (a
 * stalled Redis, a network path gone silent) looks like to its client. For a plugin's tests that
 * its own timeouts end every call instead of leaving it waiting.
 *
 * @example
 * const silent = await startSilentServer();
 * const storage = await setupStorage({ driver: "redis", url: `redis://127.0.0.1:${silent.port}`, command_timeout_ms: 200 });
 * await expect(storage.getCompletion("default", "x")).rejects.toThrow(/timed out/);
 * await silent.close();
 */
import { createServer, type AddressInfo, type Socket } from "node:net";

export interface SilentServer {
  /** Its port on 127.0.0.1. */
  port: number;
  /** Connections accepted so far. */
  readonly connections: number;
  /** Drops every connection it holds and stops listening. */
  close(): Promise<void>;
}

/** Starts a server on a free port of 127.0.0.1 that reads nothing back to anyone. */
export async function startSilentServer(): Promise<SilentServer> {
  const held = new Set<Socket>();
  let connections = 0;
  const server = createServer((socket) => {
    connections += 1;
    held.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => held.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    get connections() {
      return connections;
    },
    async close() {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
