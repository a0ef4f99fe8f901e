/**
 * Reads a JSON request body with the checks of contract §7, in this order: 415 for a body that is
 * not declared JSON, 413 for one over `server.body_limit` (from content-length when sent, else
 * while reading), 400 for one that does not parse. On Node the body is read from the
 * IncomingMessage directly: no web stream is made.
 */
import type { IncomingMessage } from "node:http";
import type { H3Event } from "h3";
import { bodyTooLarge, invalidRequest, unsupportedMediaType } from "../errors.ts";

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

function readNodeBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        // Stop reading; the reply closes the connection so the rest is never buffered.
        req.pause();
        reject(bodyTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
  });
}

async function readWebBody(request: Request, limit: number): Promise<Buffer> {
  if (!request.body) return Buffer.alloc(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw bodyTooLarge(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size);
}

/**
 * Returns the parsed JSON body of a POST.
 * @throws 415, 413 or 400 in the envelope
 */
export async function readJsonBody(event: H3Event, limit: number): Promise<unknown> {
  const contentType = event.req.headers.get("content-type");
  if (!contentType || !JSON_TYPE.test(contentType)) throw unsupportedMediaType(contentType);
  const declared = Number(event.req.headers.get("content-length") ?? NaN);
  if (declared > limit) throw bodyTooLarge(limit);
  const nodeReq = event.runtime?.node?.req;
  const raw = nodeReq ? await readNodeBody(nodeReq as IncomingMessage, limit) : await readWebBody(event.req as Request, limit);
  if (raw.length === 0) throw invalidRequest("Request body is empty; send a JSON object.", { code: "missing_field", param: null });
  try {
    return JSON.parse(raw.toString("utf8"));
  } catch (error) {
    throw invalidRequest(`Request body is not valid JSON: ${(error as Error).message}`, { code: "invalid_json", param: null });
  }
}

/**
 * A Buffer as a `Response` body, without a copy. The DOM typings of this TypeScript version want
 * `Uint8Array<ArrayBuffer>`, and a Buffer's may be a SharedArrayBuffer in theory; ours never is.
 */
export function asBody(bytes: Buffer): BodyInit {
  return bytes as unknown as BodyInit;
}
