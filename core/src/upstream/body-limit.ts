/**
 * `server.upstream_body_limit` (README, Errors): the most the router holds of one upstream reply at
 * once, in bytes on every path: a whole JSON or error body, one SSE event. Its default, how a
 * reader finds it on a body, and the error a reader stops with past it.
 */
import type { HttpBody } from "./client.ts";

/** The default of `server.upstream_body_limit`: 64 MiB. */
export const DEFAULT_UPSTREAM_BODY_LIMIT = 64 * 1024 * 1024;

/** What a reader of `body` may buffer at once (see `HttpBody.bufferLimit`). */
export function bufferLimitOf(body: HttpBody): number {
  return body.bufferLimit ?? DEFAULT_UPSTREAM_BODY_LIMIT;
}

/** The `code` of an `UpstreamBodyTooLarge`. */
export const UPSTREAM_BODY_TOO_LARGE = "MODELMUX_UPSTREAM_BODY_TOO_LARGE";

/**
 * A reply, or one event of a stream, outgrew `server.upstream_body_limit`: its reader stopped and
 * the request was cancelled. `toUpstreamError` makes it a 502 naming the provider and the limit.
 * Matched by its `code`, as undici's errors are.
 */
export class UpstreamBodyTooLarge extends Error {
  readonly code = UPSTREAM_BODY_TOO_LARGE;

  constructor(
    /** The limit in bytes. */
    readonly limit: number,
    /** What outgrew it: a whole reply read as text, or one event of a stream. */
    readonly part: "reply" | "event",
  ) {
    super(`The upstream sent ${part === "event" ? "an event" : "a reply"} larger than ${limit} bytes (server.upstream_body_limit).`);
    this.name = "UpstreamBodyTooLarge";
  }
}
