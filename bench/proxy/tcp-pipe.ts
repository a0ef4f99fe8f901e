/**
 * The floor under every proxy of the benchmark: a TCP pipe, run as its own process like the
 * routers (`node --import tsx bench/proxy/tcp-pipe.ts <upstream>`). Each client connection gets its
 * own connection to the upstream and the bytes are copied both ways as they arrive: no HTTP
 * parsing, no headers, no pool. Whatever share of direct it reaches is what one more hop on this
 * machine allows (one more process on the cores the load generator and the upstream share, and
 * one more pair of loopback writes per request); no HTTP proxy can reach more.
 *
 * It prints `{"port": N}` on stdout once it listens on 127.0.0.1.
 */
import { connect, createServer, type AddressInfo, type Socket } from "node:net";

const upstream = new URL(process.argv[2] ?? "");
if (upstream.hostname !== "127.0.0.1") throw new Error(`tcp-pipe: the upstream must be on 127.0.0.1, got ${process.argv[2]}`);

/** Copies what `from` receives to `to`; each side closes the other. */
function copy(from: Socket, to: Socket): void {
  from.on("data", (bytes: Buffer) => to.write(bytes));
  from.on("close", () => to.destroy());
  from.on("error", () => {}); // a reset shows as the close that follows
}

const server = createServer((client) => {
  const toUpstream = connect(Number(upstream.port), "127.0.0.1");
  client.setNoDelay(true);
  toUpstream.setNoDelay(true);
  copy(client, toUpstream);
  copy(toUpstream, client);
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
// Nothing to flush: the open connections go with the process.
process.on("SIGTERM", () => process.exit(0));
