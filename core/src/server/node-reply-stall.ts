/**
 * A reply whose client stops reading, bounded (`server.write_timeout`, README "Slow clients and
 * connections"). Once the kernel's buffers to a client are full, a write waits for the client to
 * take more; one that never does would hold its connection, one of `server.max_connections`, until
 * shutdown. So every wait for the socket ('drain' of a write, 'finish' of a reply's end) is given a
 * timer, and a wait that outlasts it closes the connection. A wait that never happens costs nothing:
 * a reply the kernel takes at once (every reply to a client that reads) sets no timer.
 */
import type { ServerResponse } from "node:http";

/** A body over this many bytes is written in pieces of this size, each waited for: see `writeBody`. */
export const WRITE_PIECE_BYTES = 64 * 1024;

/** What the access log says of a reply cut for its client's stall (`closed=write_timeout`). */
export const WRITE_TIMEOUT_CLOSED = "write_timeout";

/**
 * Waits until `res` has written what it holds: its 'drain' (after a write that filled the buffer) or
 * its 'finish' (after `end()`), or until its connection closes. When neither comes within
 * `timeoutMs` (0: no limit) the connection is reset, which ends the reply as a client's leaving
 * does. A reply queued behind another on a pipelined connection is timed from its turn.
 * @returns false when the connection was closed for the stall
 */
export function awaitWritten(res: ServerResponse, event: "drain" | "finish", timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const done = () => settle(true);
    const stalled = () => {
      settle(false);
      // A reset, not a close: a close would leave the unsent bytes in the kernel, which would go on
      // trying to deliver them, and the connection's end, to a client that reads nothing.
      try {
        res.socket?.resetAndDestroy();
      } catch {
        // Not a plain TCP socket (TLS throws ERR_INVALID_HANDLE_TYPE): closed below instead.
      }
      // Marks the reply destroyed now (the socket's 'close' comes a tick later).
      res.destroy();
    };
    const arm = () => {
      if (timeoutMs > 0) timer = setTimeout(stalled, timeoutMs);
    };
    function settle(written: boolean) {
      clearTimeout(timer);
      res.off(event, done);
      res.off("close", done);
      res.off("socket", arm);
      resolve(written);
    }
    res.on(event, done);
    res.on("close", done);
    if (res.socket) arm();
    else res.once("socket", arm);
  });
}

/**
 * Ends `res` with `body` (its head already written) and resolves once the client has it all; false
 * when the connection was closed for a stall. A body the kernel takes at once resolves at once,
 * without a timer. A large body goes in pieces of `WRITE_PIECE_BYTES`, each waited for, so the bound
 * is on the client's taking nothing (under a piece in `timeoutMs`), not on the whole body's time.
 */
export async function writeBody(res: ServerResponse, body: string | Buffer, timeoutMs: number): Promise<boolean> {
  const bytes = typeof body === "string" ? Buffer.from(body) : body;
  let at = 0;
  for (; at + WRITE_PIECE_BYTES < bytes.length; at += WRITE_PIECE_BYTES) {
    if (res.destroyed) return true;
    if (!res.write(bytes.subarray(at, at + WRITE_PIECE_BYTES)) && !(await awaitWritten(res, "drain", timeoutMs))) return false;
  }
  return endWritten(res, bytes.subarray(at), timeoutMs);
}

/** `res.end(last)`, then `awaitWritten(res, "finish")` when the kernel did not take it all at once. */
export function endWritten(res: ServerResponse, last: string | Buffer | undefined, timeoutMs: number): true | Promise<boolean> {
  if (res.destroyed) return true;
  res.end(last);
  if (res.writableFinished) return true;
  return awaitWritten(res, "finish", timeoutMs);
}
