/**
 * The fetch adapter: serves a web `Request` and answers a `Response`, for runtimes and frameworks
 * built on web standards (h3, Hono, Bun, Deno) and for tests without a port. Same dispatch, same
 * endpoints as the Node adapter; a stream becomes a `ReadableStream` pulled by the client.
 */
import { bodyTooLarge } from "../errors.ts";
import type { Logger } from "../logger.ts";
import type { SseFrame } from "../sse/write.ts";
import { logAccess } from "./access-log.ts";
import { errorReplyOf } from "./error-reply.ts";
import { BaseExchange, requestIdFor, type Exchange } from "./exchange.ts";
import { JSON_TYPE, type Reply } from "./reply.ts";

export interface FetchAdapterContext {
  dispatch(x: Exchange): Promise<Reply>;
  logger: Logger;
}

class WebExchange extends BaseExchange {
  constructor(
    readonly request: Request,
    private readonly url: URL,
  ) {
    super(request.method, url.pathname, url.search, requestIdFor(request.headers.get("x-request-id") ?? undefined), performance.now());
    const signal = request.signal;
    if (signal.aborted) this.abort.abort();
    else signal.addEventListener("abort", () => this.abort.abort(), { once: true });
  }

  /** The request URL's origin: parsed, so it holds no path or query whatever the Host was. */
  get origin(): string {
    return this.url.origin;
  }

  /** A web `Request` carries no peer address: forwarded headers are never believed here. */
  get peerAddress(): undefined {
    return undefined;
  }

  header(name: string): string | undefined {
    return this.request.headers.get(name) ?? undefined;
  }

  async readBody(limit: number): Promise<Buffer> {
    const body = this.request.body;
    if (!body) return Buffer.alloc(0);
    const reader = body.getReader();
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
}

/** A Buffer as a `Response` body, without a copy (the DOM typings want `Uint8Array<ArrayBuffer>`). */
function asBody(bytes: Buffer): BodyInit {
  return bytes as unknown as BodyInit;
}

/** The frames as a byte stream that the reader pulls: a slow reader slows the upstream read. */
function frameStream(frames: AsyncIterator<SseFrame>, onEnd: () => void): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    onEnd();
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
        end();
      }
    },
  });
}

function toResponse(logger: Logger, x: WebExchange, reply: Reply): Response {
  const head = x.method === "HEAD";
  if (reply.kind === "sse") {
    const body = frameStream(reply.frames, () => logAccess(logger, x, 200));
    return new Response(body, { status: 200, headers: { ...reply.headers, "x-request-id": x.requestId } });
  }
  const headers: Record<string, string> = reply.kind === "json" ? { "content-type": JSON_TYPE } : {};
  if (reply.headers) Object.assign(headers, reply.headers);
  headers["x-request-id"] = x.requestId;
  const body = head || reply.body === null ? null : typeof reply.body === "string" ? reply.body : asBody(reply.body);
  logAccess(logger, x, reply.status);
  return new Response(body, { status: reply.status, headers });
}

/**
 * Creates the `fetch(request)` handler of a router.
 * @example Bun.serve({ fetch: createFetchHandler({ dispatch, logger }) })
 */
export function createFetchHandler(app: FetchAdapterContext): (request: Request) => Promise<Response> {
  return async function handleFetch(request) {
    const x = new WebExchange(request, new URL(request.url));
    try {
      return toResponse(app.logger, x, await app.dispatch(x));
    } catch (error) {
      const { status, headers, body } = errorReplyOf(error, x, app.logger);
      logAccess(app.logger, x, status);
      return new Response(body, { status, headers });
    }
  };
}
