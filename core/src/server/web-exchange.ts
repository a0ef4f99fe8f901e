/**
 * The exchange of a request that came as a web `Request`: `router.fetch`, `router.app.request()`,
 * or the router's h3 app mounted in another h3 app (whatever runtime serves that one).
 */
import type { H3Event } from "h3";
import { bodyTooLarge } from "../errors.ts";
import { BaseExchange } from "./exchange.ts";

export class WebExchange extends BaseExchange {
  readonly request: Request;
  /** The URL's origin: parsed, so it holds no path or query whatever the Host was. */
  readonly origin: string;

  /** Reads the event's URL now: in a mounted app, its path is the one under the mount's base only while the router's middleware run. */
  constructor(event: H3Event) {
    const { url } = event;
    super(event.req.method, url.pathname, url.search, performance.now());
    this.request = event.req;
    this.origin = url.origin;
    const signal = this.request.signal;
    if (signal.aborted) this.abort.abort();
    else signal.addEventListener("abort", () => this.abort.abort(), { once: true });
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
