/**
 * The router's h3 app: the one app every request goes through, whichever way it comes in
 * (`router.handler`, `router.fetch`, `router.app` mounted in another app). Its layers, in order:
 * the reply writer (`write-replies.ts`), the middleware `createRouter` composed (defaults:
 * `requestId`, `accessLog`, `metrics`, `usageCounters`, `activity`, `cors`, `auth`, `bodyLimit`,
 * `rateLimit`; docs/architecture.md), then the routes (`route-handlers.ts`).
 */
import { H3, type Middleware } from "h3";
import type { ReplyWriting } from "./node-reply.ts";
import { addRoutes, type Route } from "./route-handlers.ts";
import { createReplyWriter } from "./write-replies.ts";

export interface AppOptions extends ReplyWriting {
  routes: readonly Route[];
  middleware: readonly Middleware[];
}

export function createApp(options: AppOptions): H3 {
  const writer = createReplyWriter(options);
  const app = new H3({
    // Every error is answered in the envelope and logged by the router, never by h3.
    silent: true,
    // A path that is not valid percent-encoding is the route's to refuse (400 for a parameter, 404 otherwise).
    allowMalformedURL: true,
    onError: (error, event) => writer.writeError(event, error),
  });
  app.use(writer.middleware);
  for (const middleware of options.middleware) app.use(middleware);
  addRoutes(app, options.routes, writer);
  return app;
}
