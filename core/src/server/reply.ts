/**
 * What an endpoint returns: a description of its reply that the reply writer (`write-replies.ts`)
 * writes one of two ways (straight to the socket on `router.handler`, as a `Response` otherwise).
 * Three kinds: a JSON body (already serialised), bytes with their content type, and a
 * Server-Sent Events stream. Made by the functions below only, as instances of `EndpointReply`, so
 * the writer tells them apart from what an embedder's own h3 handler returns.
 */
import type { SseFrame } from "../sse/write.ts";

/** The content type of every JSON reply, errors included. */
export const JSON_TYPE = "application/json;charset=UTF-8";

export type Headers = Readonly<Record<string, string>>;

export interface JsonReply {
  kind: "json";
  status: number;
  /** The serialised JSON. */
  body: string;
  headers: Headers | undefined;
}

export interface BytesReply {
  kind: "bytes";
  status: number;
  /** `null` for a reply without a body (a HEAD answered with the GET's headers). */
  body: Buffer | null;
  /** Must include `content-type`, unless there is no body at all (a 204). */
  headers: Headers;
}

export interface SseReply {
  kind: "sse";
  /** Status 200; the headers must include the SSE content type (`SSE_HEADERS`). */
  headers: Headers;
  /** Never throws: a failure mid-stream is an error event among the frames. Ending it early (`return`) releases the source. */
  frames: AsyncIterator<SseFrame>;
}

export type Reply = JsonReply | BytesReply | SseReply;

/** The class of every reply made here. */
export abstract class EndpointReply {}

class Json extends EndpointReply implements JsonReply {
  readonly kind = "json";
  constructor(
    readonly status: number,
    readonly body: string,
    readonly headers: Headers | undefined,
  ) {
    super();
  }
}

class Bytes extends EndpointReply implements BytesReply {
  readonly kind = "bytes";
  constructor(
    readonly status: number,
    readonly body: Buffer | null,
    readonly headers: Headers,
  ) {
    super();
  }
}

class Sse extends EndpointReply implements SseReply {
  readonly kind = "sse";
  constructor(
    readonly headers: Headers,
    readonly frames: AsyncIterator<SseFrame>,
  ) {
    super();
  }
}

/** Whether `value` is a reply an endpoint made. */
export function isReply(value: unknown): value is Reply {
  return value instanceof EndpointReply;
}

/**
 * A JSON reply of a value, serialised here.
 * @example return jsonReply({ status: "ok" });
 */
export function jsonReply(value: unknown, status = 200, headers?: Headers): JsonReply {
  return new Json(status, JSON.stringify(value), headers);
}

/** A JSON reply whose text is already made (a prebuilt list, a body relayed as received). */
export function jsonTextReply(body: string, status = 200, headers?: Headers): JsonReply {
  return new Json(status, body, headers);
}

export function bytesReply(body: Buffer | null, headers: Headers, status = 200): BytesReply {
  return new Bytes(status, body, headers);
}

export function sseReply(headers: Headers, frames: AsyncIterator<SseFrame>): SseReply {
  return new Sse(headers, frames);
}
