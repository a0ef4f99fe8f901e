/**
 * `router.handler`: the Node way into the router's h3 app. The request enters the app as srvx's
 * lazy `NodeRequest` (nothing of it is read unless asked for) carrying a `NodeExchange`, so the
 * router's middleware and endpoints work straight on `IncomingMessage`/`ServerResponse` and the
 * reply writer writes to the socket itself. Only what the router did not write (a `Response` an
 * embedder's middleware returned) is sent through srvx.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { H3 } from "h3";
import { NodeRequest, sendNodeResponse } from "srvx/node";
import { contextWith } from "./event-exchange.ts";
import { NodeExchange } from "./node-exchange.ts";
import { writeNodeError, type ReplyWriting } from "./node-reply.ts";

const kExchange = Symbol("modelmux.nodeExchange");
type TaggedResponse = ServerResponse & { [kExchange]?: NodeExchange };

/** Once per response: a close before the reply finished is a client that went away. */
function onResponseClose(this: TaggedResponse): void {
  const x = this[kExchange];
  if (x && !this.writableFinished) x.abort.abort();
}

/**
 * The `(req, res)` handler of a router's app.
 * @example http.createServer(createNodeHandler(app, { logger, writeTimeoutMs: 30_000 }))
 */
export function createNodeHandler(app: H3, w: ReplyWriting): (req: IncomingMessage, res: ServerResponse) => void {
  const { fetch } = app;

  function sendUnwritten(x: NodeExchange, response: Response): void {
    if (x.taken || x.res.headersSent || x.res.destroyed) return;
    // What an embedder's middleware or route gave (a Response, or what h3 made of its value).
    x.end(response.status);
    sendNodeResponse(x.res, response).catch((error: unknown) => w.logger.warn("sending a reply failed", error));
  }

  return function handleNodeRequest(req, res) {
    const x = new NodeExchange(req, res);
    (res as TaggedResponse)[kExchange] = x;
    res.on("close", onResponseClose);
    const request = new NodeRequest({ req, res });
    request.context = contextWith(x);
    const response = fetch(request);
    if (response instanceof Promise) {
      response.then(
        (r) => sendUnwritten(x, r),
        (error: unknown) => writeNodeError(w, x, error),
      );
    } else sendUnwritten(x, response);
  };
}
