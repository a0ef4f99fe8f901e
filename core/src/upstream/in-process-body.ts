/**
 * A reply body made in process, for providers that answer without an upstream (the echo model, a
 * plugin's cache): the same shape as an HTTP client's body, so the core relays it the same way.
 */
import { Readable } from "node:stream";
import type { HttpBody } from "./client.ts";

/**
 * An `HttpBody` yielding `chunks` in order, as bytes.
 * @example
 * return { status: 200, contentType: "application/json", body: replyBody([JSON.stringify(response)]) };
 */
export function replyBody(chunks: Iterable<string | Buffer> | AsyncIterable<string | Buffer>): HttpBody {
  const readable = Readable.from(chunks, { objectMode: false }) as Readable & HttpBody;
  readable.text = async () => {
    const parts: Buffer[] = [];
    for await (const chunk of readable as AsyncIterable<Buffer | string>) parts.push(Buffer.from(chunk));
    return Buffer.concat(parts).toString("utf8");
  };
  readable.json = async () => JSON.parse(await readable.text()) as unknown;
  return readable;
}
