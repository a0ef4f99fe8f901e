/**
 * What an endpoint returns: a description of its reply that each adapter writes its own way (the
 * Node adapter straight to the socket, the fetch adapter as a `Response`). Three kinds: a JSON body
 * (already serialised), bytes with their content type, and a Server-Sent Events stream.
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
  /** Must include `content-type`. */
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

/**
 * A JSON reply of a value, serialised here.
 * @example return jsonReply({ status: "ok" });
 */
export function jsonReply(value: unknown, status = 200, headers?: Headers): JsonReply {
  return { kind: "json", status, body: JSON.stringify(value), headers };
}

/** A JSON reply whose text is already made (a prebuilt list, a body relayed as received). */
export function jsonTextReply(body: string, status = 200, headers?: Headers): JsonReply {
  return { kind: "json", status, body, headers };
}

export function bytesReply(body: Buffer | null, headers: Headers, status = 200): BytesReply {
  return { kind: "bytes", status, body, headers };
}

export function sseReply(headers: Headers, frames: AsyncIterator<SseFrame>): SseReply {
  return { kind: "sse", headers, frames };
}
