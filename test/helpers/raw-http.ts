/**
 * A raw HTTP/1.1 connection for tests that need to control exactly what goes on one socket and when:
 * keep-alive reuse, a body sent slowly or not read back, a request sent after the server stopped.
 */
import { connect, type Socket } from "node:net";

export interface RawResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: string;
}

export class RawConnection {
  /** Every byte received so far that no `readResponse` has taken. */
  private buffer = Buffer.alloc(0);
  private waiters = new Set<() => void>();
  /** Bytes received over the connection's life. */
  received = 0;
  /** Resolves when the socket has closed (either side), with what ended it. */
  readonly closed: Promise<{ error?: string; at: number }>;
  private isClosed = false;

  private constructor(readonly socket: Socket) {
    socket.on("data", (chunk: Buffer) => {
      this.received += chunk.length;
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.wake();
    });
    this.closed = new Promise((resolve) => {
      let error: string | undefined;
      socket.on("error", (e: NodeJS.ErrnoException) => (error ??= e.code ?? e.message));
      socket.on("close", () => {
        this.isClosed = true;
        this.wake();
        resolve({ error, at: Date.now() });
      });
    });
  }

  /** Opens a connection to 127.0.0.1:`port`. */
  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.off("error", reject);
        resolve(new RawConnection(socket));
      });
      socket.once("error", reject);
    });
  }

  get isOpen(): boolean {
    return !this.isClosed;
  }

  /** Writes bytes; false once the socket can no longer be written. */
  send(data: string | Buffer): boolean {
    if (this.socket.destroyed || this.socket.writableEnded) return false;
    return this.socket.write(data);
  }

  close(): void {
    this.socket.destroy();
  }

  private wake(): void {
    for (const waiter of this.waiters) waiter();
  }

  /**
   * Resolves with the next complete response (content-length or chunked body); rejects when the
   * connection closes before one is complete, or after `timeoutMs`.
   */
  readResponse(timeoutMs = 5000): Promise<RawResponse> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const response = this.takeResponse();
        if (response) return finish(() => resolve(response));
        if (this.isClosed) finish(() => reject(new Error(`closed before a complete response (${this.buffer.length} bytes pending: ${JSON.stringify(this.buffer.toString("latin1").slice(0, 200))})`)));
      };
      const timer = setTimeout(() => finish(() => reject(new Error(`no complete response within ${timeoutMs} ms`))), timeoutMs);
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        settle();
      };
      this.waiters.add(check);
      check();
    });
  }

  /** Parses one response off the front of the buffer, or returns undefined if it is not all there. */
  private takeResponse(): RawResponse | undefined {
    const text = this.buffer.toString("latin1");
    const headEnd = text.indexOf("\r\n\r\n");
    if (headEnd < 0) return undefined;
    const [statusLine, ...lines] = text.slice(0, headEnd).split("\r\n");
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine!)?.[1]);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(":");
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    let at = headEnd + 4;
    let body = "";
    if (headers["transfer-encoding"] === "chunked") {
      for (;;) {
        const lineEnd = text.indexOf("\r\n", at);
        if (lineEnd < 0) return undefined;
        const size = parseInt(text.slice(at, lineEnd), 16);
        if (text.length < lineEnd + 2 + size + 2) return undefined;
        body += text.slice(lineEnd + 2, lineEnd + 2 + size);
        at = lineEnd + 2 + size + 2;
        if (size === 0) break;
      }
    } else {
      const length = Number(headers["content-length"] ?? 0);
      if (text.length < at + length) return undefined;
      body = text.slice(at, at + length);
      at += length;
    }
    this.buffer = this.buffer.subarray(at);
    return { status, headers, body: Buffer.from(body, "latin1").toString("utf8") };
  }
}

/** A request's text: `method path`, headers (a Host is added), and a body with its content-length. */
export function rawRequest(method: string, path: string, headers: Record<string, string> = {}, body?: string): string {
  const all: Record<string, string> = { host: "127.0.0.1", ...headers };
  if (body !== undefined && all["content-length"] === undefined && all["transfer-encoding"] === undefined) all["content-length"] = String(Buffer.byteLength(body));
  const head = Object.entries(all).map(([name, value]) => `${name}: ${value}\r\n`).join("");
  return `${method} ${path} HTTP/1.1\r\n${head}\r\n${body ?? ""}`;
}
