/**
 * A port on 127.0.0.1 that nothing listens on (one just closed): a backend that is down, for the
 * readiness and failure tests.
 */
import { createServer } from "node:net";

export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
