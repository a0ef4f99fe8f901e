/**
 * A reply sent while the request's body is still arriving (413 over `server.body_limit`), made
 * readable for the client. A socket closed with unread bytes makes the kernel answer the client
 * with a reset, and a client still sending its body then often sees EPIPE or ECONNRESET instead of
 * the reply (SDKs take that for a network error and send the same body again). So the reply goes
 * out whole, with its content-length, and what the client still sends is read and thrown away
 * until it stops, bounded in bytes and time; only then does the response end, and its
 * `connection: close` close the socket.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import { endWritten } from "./node-reply-stall.ts";

/** The most that is read (and discarded) of what a refused client still sends. */
export const DRAIN_BYTES = 16 * 1024 * 1024;
/** The longest a refused client is given to stop sending. */
export const DRAIN_MS = 5_000;

/**
 * Writes a whole reply on `res` now, then discards the rest of `req`'s body until it ends, the
 * client goes, `DRAIN_BYTES` have come or `DRAIN_MS` have passed; then ends the response, whose
 * client then has `writeTimeoutMs` to take what is left of it. Only for replies that close the
 * connection.
 */
export function replyThenDrain(req: IncomingMessage, res: ServerResponse, status: number, headers: OutgoingHttpHeaders, body: string, writeTimeoutMs: number): void {
  res.writeHead(status, { ...headers, "content-length": Buffer.byteLength(body) });
  res.write(body);
  let left = DRAIN_BYTES;
  const done = () => {
    clearTimeout(timer);
    req.off("data", discard);
    req.off("end", done);
    req.off("error", done);
    res.off("close", done);
    if (!res.writableEnded) void endWritten(res, undefined, writeTimeoutMs);
  };
  function discard(chunk: Buffer) {
    left -= chunk.length;
    if (left < 0) done();
  }
  const timer = setTimeout(done, DRAIN_MS);
  req.on("data", discard);
  req.once("end", done);
  req.once("error", done);
  res.once("close", done);
  req.resume();
}
