/**
 * A port on 127.0.0.1 whose new connections never complete, as with a host that drops every SYN:
 * for `routing.timeouts.connect` without leaving loopback.
 *
 * How: a listening socket that never accepts, its accept queue filled. Linux keeps `backlog + 1`
 * connections in a listener's accept queue; while it is full, it drops each new SYN without a
 * SYN-ACK (`tcp_abort_on_overflow` 0, the default), so the client's connect waits on its SYN
 * retransmissions (1 s, 3 s, 7 s…) until its own timeout. Node accepts on its event loop, so the
 * listener lives in a worker thread that, once listening, blocks in `Atomics.wait` (no CPU, no
 * event loop turns) until `close()`. The queue is filled here with connections opened one by one
 * until one of them does not connect: from then on no connect to the port gets through.
 *
 * @example
 * const silent = await startSilentPort();
 * config.providers.primary.base_url = `${silent.url}/v1`; // connects to it time out
 * await silent.close();
 */
import { connect, type Socket } from "node:net";
import { Worker } from "node:worker_threads";

export interface SilentPort {
  port: number;
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** Wakes the worker, which closes the listener and ends; drops the connections that filled its queue. */
  close(): Promise<void>;
}

/** The listener's worker: listens with the smallest queue, says its port, then blocks until told to end. */
const LISTENER = `
const { parentPort, workerData } = require("node:worker_threads");
const server = require("node:net").createServer();
server.listen({ port: 0, host: "127.0.0.1", backlog: 1 }, () => {
  parentPort.postMessage(server.address().port);
  Atomics.wait(workerData.wake, 0, 0);
  process.exit(0);
});
`;

/** How long a loopback connect may take before it counts as dropped; a completed one takes well under 1 ms. */
const DROPPED_AFTER_MS = 500;
/** More connections than any accept queue of `backlog: 1` holds; past them the port is not silent. */
const MAX_FILLERS = 8;

/** Opens a connection to `port`; resolves with it once connected, or undefined (destroyed) once `DROPPED_AFTER_MS` passed. */
function connectOrDrop(port: number): Promise<Socket | undefined> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const dropped = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(undefined);
    };
    const timer = setTimeout(dropped, DROPPED_AFTER_MS);
    socket.once("error", dropped);
    socket.once("connect", () => {
      clearTimeout(timer);
      socket.off("error", dropped);
      resolve(socket);
    });
  });
}

/**
 * Starts a silent port.
 * @throws when the accept queue did not fill within `MAX_FILLERS` connections (a system that
 *   answers a full queue otherwise): a test on it would not test a hanging connect.
 */
export async function startSilentPort(): Promise<SilentPort> {
  const wake = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(LISTENER, { eval: true, workerData: { wake } });
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  const fillers: Socket[] = [];
  const close = async () => {
    Atomics.store(wake, 0, 1);
    Atomics.notify(wake, 0);
    await exited;
    for (const socket of fillers) socket.destroy();
  };
  for (let i = 0; i < MAX_FILLERS; i++) {
    const socket = await connectOrDrop(port);
    if (socket === undefined) return { port, url: `http://127.0.0.1:${port}`, close };
    // The filler's end is never read: it only holds its place in the queue.
    socket.on("error", () => {});
    fillers.push(socket);
  }
  await close();
  throw new Error(`startSilentPort: 127.0.0.1:${port} still accepted connections after ${MAX_FILLERS}; its accept queue does not fill here`);
}
