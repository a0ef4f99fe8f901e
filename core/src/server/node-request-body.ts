/**
 * Reads an incoming request's body on node:http into one Buffer, refusing it (413) as soon as it
 * outgrows the limit, and lets the server end a read in progress (its request timeout). The
 * listeners are module functions that keep their state on the request: nothing is bound per request.
 */
import type { IncomingMessage } from "node:http";
import { bodyTooLarge } from "../errors.ts";
import { continueBody } from "./node-expect-continue.ts";

/** A body being read: its chunks so far, kept on the request while its listeners run. */
interface BodyRead {
  chunks: Buffer[];
  size: number;
  limit: number;
  resolve(body: Buffer): void;
  reject(error: unknown): void;
}

const kBodyRead = Symbol("modelmux.bodyRead");
type ReadingRequest = IncomingMessage & { [kBodyRead]?: BodyRead };

/**
 * Reads `req`'s body into one Buffer (asking for it first when the client waits for a
 * `100 Continue`); rejects with a 413 as soon as it outgrows `limit` bytes.
 */
export function readNodeBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  continueBody(req);
  return new Promise((resolve, reject) => {
    (req as ReadingRequest)[kBodyRead] = { chunks: [], size: 0, limit, resolve, reject };
    req.on("data", onBodyData);
    req.on("end", onBodyEnd);
    req.on("error", onBodyError);
  });
}

/** Stops listening; returns the read it ends. */
function endBodyRead(req: ReadingRequest): BodyRead {
  const read = req[kBodyRead]!;
  req[kBodyRead] = undefined;
  req.off("data", onBodyData);
  req.off("end", onBodyEnd);
  req.off("error", onBodyError);
  return read;
}

function onBodyData(this: ReadingRequest, chunk: Buffer): void {
  const read = this[kBodyRead]!;
  read.size += chunk.length;
  if (read.size > read.limit) {
    endBodyRead(this);
    // Stop reading: the rest is never buffered, only drained once the 413 is out (node-drain-request.ts).
    this.pause();
    read.reject(bodyTooLarge(read.limit));
    return;
  }
  read.chunks.push(chunk);
}

function onBodyEnd(this: ReadingRequest): void {
  const { chunks, size, resolve } = endBodyRead(this);
  resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
}

function onBodyError(this: ReadingRequest, error: Error): void {
  endBodyRead(this).reject(error);
}

/**
 * Ends the body read in progress on `req`, if there is one, with `error`: the request's handler
 * then answers with it (the server's request timeout answers a slow body this way, in the
 * envelope). Returns false when no body is being read.
 */
export function failBodyRead(req: IncomingMessage, error: unknown): boolean {
  if (!(req as ReadingRequest)[kBodyRead]) return false;
  const read = endBodyRead(req as ReadingRequest);
  req.pause();
  read.reject(error);
  return true;
}
