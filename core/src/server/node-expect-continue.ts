/**
 * `Expect: 100-continue` on node:http (README "Slow clients and connections"). Such a client sends
 * its headers, then waits for `100 Continue` before it uploads its body (curl does for bodies over
 * 1 MB). node writes the 100 at once by default, so a request refused anyway (no key, a declared
 * `content-length` over `server.body_limit`) would still have its whole body uploaded, only to be
 * read and thrown away. Here the 100 is written when the body is first read, after every check made
 * before reading (`read-body.ts`): a request refused before then gets its reply without a
 * 100, and its connection is closed, since its client, which never sent the body, cannot go on.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

/** An Expect request's response, until its `100 Continue` is written; and whether it could keep its connection. */
interface PendingContinue {
  res: ServerResponse;
  keepAlive: boolean;
}

const kContinue = Symbol("modelmux.expectContinue");
type ContinueRequest = IncomingMessage & { [kContinue]?: PendingContinue };

/**
 * For node's 'checkContinue' event: holds back the `100 Continue` of `req` until its body is read
 * (`continueBody`), and makes a reply written before that close the connection.
 */
export function deferContinue(req: IncomingMessage, res: ServerResponse): void {
  (req as ContinueRequest)[kContinue] = { res, keepAlive: res.shouldKeepAlive };
  res.shouldKeepAlive = false;
}

/**
 * Called before `req`'s body is read: writes its deferred `100 Continue`, if it has one, and gives
 * its connection back the keep-alive it had.
 */
export function continueBody(req: IncomingMessage): void {
  const pending = (req as ContinueRequest)[kContinue];
  if (pending === undefined) return;
  (req as ContinueRequest)[kContinue] = undefined;
  pending.res.shouldKeepAlive = pending.keepAlive;
  pending.res.writeContinue();
}

/** True while `req` expects a `100 Continue` it has not had: its client has not sent its body. */
export function awaitingContinue(req: IncomingMessage): boolean {
  return (req as ContinueRequest)[kContinue] !== undefined;
}
