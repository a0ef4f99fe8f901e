/**
 * The exchange of a request served by `router.handler`, straight on `IncomingMessage` and
 * `ServerResponse`: no web `Request`, `Headers` or `AbortController` is made for it, its body is
 * read from the socket's chunks (`node-request-body.ts`), and its reply is written by
 * `node-reply.ts`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { isIPv4, type Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { BaseExchange } from "./exchange.ts";
import { readNodeBody } from "./node-request-body.ts";
import { isValidHost } from "./public-origin.ts";

/** `address:port` the connection was accepted on, as a URL authority (`[::1]:8080`, `127.0.0.1:8080`). */
function localAuthority(socket: Socket): string {
  const address = socket.localAddress;
  if (address === undefined) return "localhost";
  const plain = address.startsWith("::ffff:") && isIPv4(address.slice(7)) ? address.slice(7) : address;
  return `${plain.includes(":") ? `[${plain}]` : plain}:${socket.localPort}`;
}

export class NodeExchange extends BaseExchange {
  /** The reply writer has taken the response: what the app returns for it is not sent. */
  taken = false;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
  ) {
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    super(req.method ?? "GET", q < 0 ? url : url.slice(0, q), q < 0 ? "" : url.slice(q), performance.now());
  }

  get origin(): string {
    const scheme = (this.req.socket as TLSSocket).encrypted ? "https" : "http";
    const host = this.req.headers.host;
    // A Host that is not a plain host[:port] (`evil.example/phish?x=`) never reaches a URL: the
    // address the client connected to is used instead, which is this router's own.
    return `${scheme}://${host !== undefined && isValidHost(host) ? host : localAuthority(this.req.socket)}`;
  }

  get peerAddress(): string | undefined {
    return this.req.socket.remoteAddress;
  }

  header(name: string): string | undefined {
    const value = this.req.headers[name];
    return Array.isArray(value) ? value.join(", ") : value;
  }

  readBody(limit: number): Promise<Buffer> {
    return readNodeBody(this.req, limit);
  }
}
