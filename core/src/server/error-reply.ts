/**
 * The one place where a thrown error becomes a reply (docs/interface.md, "Errors"), for both ways a reply is written (`node-reply.ts`, `web-reply.ts`): ours as they
 * are, any failure once the client has hung up as a 499 for the log (nobody reads a reply), anything
 * else as the 500 of a bug, logged with its stack but never sent.
 */
import type { ConsolaInstance } from "consola";
import { internalError, ModelmuxError } from "../errors.ts";
import { IMAGE_FILES_PATH } from "../images/image-store.ts";
import type { Exchange } from "./exchange.ts";
import { JSON_TYPE } from "./reply.ts";

/** The status a client that left before its reply gets in the access log (nginx's convention). */
export const CLIENT_CLOSED = 499;

export interface ErrorReply {
  status: number;
  headers: Record<string, string>;
  /** The envelope; `null` for a client that is gone. */
  body: string | null;
}

/** An image URL's token is its only credential, so it never reaches a log. */
export function loggedPath(path: string): string {
  return path.startsWith(`${IMAGE_FILES_PATH}/`) ? `${IMAGE_FILES_PATH}/[token]` : path;
}

/**
 * The reply for an error thrown while serving `x`.
 * @example
 * const { status, headers, body } = errorReplyOf(error, x, logger);
 */
export function errorReplyOf(error: unknown, x: Exchange, logger: ConsolaInstance): ErrorReply {
  if (x.abort.aborted) {
    // The client left (mid-body, or while the provider worked): what failed after is its doing.
    logger.debug(`client closed ${x.method} ${loggedPath(x.path)}`, { request_id: x.requestId }, error);
    return { status: CLIENT_CLOSED, headers: x.requestId ? { "x-request-id": x.requestId } : {}, body: null };
  }
  const mapped = error instanceof ModelmuxError ? error : internalError(error);
  x.failure = mapped;
  if (mapped.status >= 500 && mapped.code === "internal_error") {
    logger.error(`internal error on ${x.method} ${loggedPath(x.path)}`, { request_id: x.requestId }, mapped.cause);
  }
  const headers: Record<string, string> = { "content-type": JSON_TYPE, ...x.rateLimitHeaders, ...x.routingHeaders, ...x.replyHeaders, ...mapped.headers };
  if (x.requestId) headers["x-request-id"] = x.requestId;
  return { status: mapped.status, headers, body: JSON.stringify(mapped.toEnvelope()) };
}
