/**
 * Turns a reply into a web `Response`, for requests that came as a web `Request` (`router.fetch`, a
 * mounted app): a stream becomes a `ReadableStream` pulled by the client, so a slow reader slows
 * the upstream read. The exchange's `end` is told when the body is made (JSON) or fully read (SSE).
 */
import type { Logger } from "../logger.ts";
import type { SseFrame } from "../sse/write.ts";
import { CLIENT_CLOSED, errorReplyOf } from "./error-reply.ts";
import type { Exchange } from "./exchange.ts";
import { JSON_TYPE, type Reply } from "./reply.ts";

/** A Buffer as a `Response` body, without a copy (the DOM typings want `Uint8Array<ArrayBuffer>`). */
function asBody(bytes: Buffer): BodyInit {
  return bytes as unknown as BodyInit;
}

/** The responses made here: the exchange's end is theirs to tell (a stream's, once it is read). */
const ours = new WeakSet<Response>();

/** Whether `response` was made by `webReply` or `webErrorReply`. */
export function isOwnResponse(response: Response): boolean {
  return ours.has(response);
}

function own(response: Response): Response {
  ours.add(response);
  return response;
}

/** The frames as a byte stream that the reader pulls; `onEnd` gets 200, or 499 when the reader cancelled. */
function frameStream(frames: AsyncIterator<SseFrame>, onEnd: (status: number) => void): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let ended = false;
  const end = (status = 200) => {
    if (ended) return;
    ended = true;
    onEnd(status);
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await frames.next();
        if (done) {
          controller.close();
          end();
        } else controller.enqueue(typeof value === "string" ? encoder.encode(value) : value);
      } catch (error) {
        controller.error(error);
        end();
      }
    },
    async cancel() {
      try {
        await frames.return?.();
      } finally {
        end(CLIENT_CLOSED);
      }
    },
  });
}

function withRequestId(headers: Record<string, string>, x: Exchange): Record<string, string> {
  if (x.requestId) headers["x-request-id"] = x.requestId;
  if (x.replyHeaders) Object.assign(headers, x.replyHeaders);
  return headers;
}

export function webReply(x: Exchange, reply: Reply): Response {
  x.repliedAt = performance.now();
  if (reply.kind === "sse") {
    const body = frameStream(reply.frames, (status) => x.end(status));
    x.startStream();
    return own(new Response(body, { status: 200, headers: withRequestId({ ...reply.headers }, x) }));
  }
  const headers: Record<string, string> = reply.kind === "json" ? { "content-type": JSON_TYPE } : {};
  if (reply.headers) Object.assign(headers, reply.headers);
  const body = x.method === "HEAD" || reply.body === null ? null : typeof reply.body === "string" ? reply.body : asBody(reply.body);
  x.end(reply.status);
  return own(new Response(body, { status: reply.status, headers: withRequestId(headers, x) }));
}

export function webErrorReply(logger: Logger, x: Exchange, error: unknown): Response {
  const { status, headers, body } = errorReplyOf(error, x, logger);
  x.repliedAt = performance.now();
  x.end(status);
  return own(new Response(x.method === "HEAD" ? null : body, { status, headers }));
}
