/**
 * The h3 app: routes, the request-id hook, the auth middleware and the one error hook that makes
 * every error reply (contract §7). Built once per router; `serve()`/`toNodeHandler` use it as is.
 */
import { randomUUID } from "node:crypto";
import { H3, HTTPError, type H3Event } from "h3";
import type { AppContext } from "./app-context.ts";
import { createChatCompletionHandler } from "./endpoints/chat-completions.ts";
import { createImageHandlers } from "./endpoints/images.ts";
import { createModelsHandler } from "./endpoints/models.ts";
import { createResponsesHandlers } from "./endpoints/responses.ts";
import { createStoredCompletionHandlers } from "./endpoints/stored-completions.ts";
import { IMAGE_FILES_PATH } from "./images/image-store.ts";
import { internalError, invalidRequest, methodNotAllowed, ModelmuxError, notFound } from "./errors.ts";

/** The content type h3 gives returned objects; errors and prebuilt bodies use the same. */
export const JSON_TYPE = "application/json;charset=UTF-8";

/** A client's own request id is kept when it is short and plain, so it cannot forge log lines. */
const CLIENT_REQUEST_ID = /^[\w.:-]{1,128}$/;

function assignRequestId(event: H3Event): void {
  const given = event.req.headers.get("x-request-id");
  const id = given && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
  event.context.requestId = id;
  event.context.startedAt = performance.now();
  event.res.headers.set("x-request-id", id);
}

/**
 * One access-log line per request (batched by the logger, written off the request path). Never
 * the Authorization header or a body: only who (app/developer), what, how it ended and how long.
 */
function createAccessLog(logger: AppContext["logger"]) {
  return function logAccess(response: Response, event: H3Event): void {
    const { requestId, startedAt, principal, model } = event.context;
    const ms = Math.round((performance.now() - startedAt) * 10) / 10;
    logger.info(`${event.req.method} ${loggedPath(event.url.pathname)}`, {
      status: response.status,
      duration_ms: ms,
      ...(model && { model }),
      ...(event.context.usage && { prompt_tokens: event.context.usage.prompt_tokens, completion_tokens: event.context.usage.completion_tokens }),
      ...(principal && { app: principal.app, developer: principal.developer }),
      request_id: requestId,
    });
  };
}

/** The path as logged: an image URL's token is its only credential, so it never reaches a log. */
function loggedPath(path: string): string {
  return path.startsWith(`${IMAGE_FILES_PATH}/`) ? `${IMAGE_FILES_PATH}/[token]` : path;
}

/** Maps what h3 hands the error hook to our error: ours as is, h3's own by status, the rest a 500. */
function toEnvelopeError(error: HTTPError, event: H3Event): ModelmuxError {
  if (error.cause instanceof ModelmuxError) return error.cause;
  if (error instanceof ModelmuxError) return error;
  if (!error.unhandled) {
    if (error.status === 404) return notFound(`Unknown route: ${event.req.method} ${event.url.pathname}`);
    if (error.status === 413) return new ModelmuxError(error.message, { status: 413, type: "invalid_request_error", code: "body_too_large" });
    // h3's own 400 is a request URL it cannot decode (bad percent-encoding); say so.
    if (error.status === 400) return invalidRequest("The request URL is malformed: its path is not valid percent-encoding.", { code: "invalid_request" });
    if (error.status > 400 && error.status < 500) return invalidRequest(error.message, { code: "invalid_request" });
  }
  return internalError(error.cause ?? error);
}

function errorResponse(error: ModelmuxError, requestId: string | undefined, rateLimitHeaders?: Readonly<Record<string, string>>): Response {
  const headers: Record<string, string> = { "content-type": JSON_TYPE, ...rateLimitHeaders, ...error.headers };
  if (requestId) headers["x-request-id"] = requestId;
  return new Response(JSON.stringify(error.toEnvelope()), { status: error.status, headers });
}

/** HEAD is answered wherever GET is (RFC 9110): health checks of load balancers use it. */
function getAndHead(app: H3, path: string, handler: (event: H3Event) => unknown): void {
  app.get(path, handler);
  app.on("HEAD", path, handler);
}

/** Answers 405 for a known path with another method. */
function onlyMethods(...allowed: string[]) {
  return function methodNotAllowedHandler(event: H3Event): never {
    throw methodNotAllowed(event.req.method, event.url.pathname, allowed);
  };
}

export function createApp(ctx: AppContext): H3 {
  const app = new H3({
    // Our error hook logs through the router's logger; h3 must not write to the console itself.
    silent: true,
    onRequest: assignRequestId,
    onResponse: createAccessLog(ctx.logger),
    onError(error, event) {
      const cause = error.cause ?? error;
      if (event.req.signal?.aborted && cause instanceof Error && cause.name === "AbortError") {
        // The client hung up: not a bug, and nobody is left to read a reply. 499 is for the log.
        ctx.logger.debug(`client closed ${event.req.method} ${loggedPath(event.url.pathname)}`, { request_id: event.context.requestId });
        return new Response(null, { status: 499, headers: { "x-request-id": event.context.requestId } });
      }
      const mapped = toEnvelopeError(error, event);
      const requestId = event.context.requestId;
      if (mapped.status >= 500 && mapped.code === "internal_error") {
        ctx.logger.error(`internal error on ${event.req.method} ${loggedPath(event.url.pathname)}`, { request_id: requestId }, mapped.cause);
      }
      return errorResponse(mapped, requestId, event.context.rateLimitHeaders);
    },
  });

  getAndHead(app, "/healthz", () => ({ status: "ok" }));
  app.use("/v1/**", async function authenticateRequest(event) {
    // An API key is checked synchronously; only a JWT (auth.jwt) gives a promise.
    const principal = ctx.authenticate(event.req.headers.get("authorization"));
    event.context.principal = principal instanceof Promise ? await principal : principal;
  });
  const stored = createStoredCompletionHandlers(ctx);
  app.post("/v1/chat/completions", createChatCompletionHandler(ctx));
  getAndHead(app, "/v1/chat/completions", stored.listCompletions);
  app.all("/v1/chat/completions", onlyMethods("GET", "HEAD", "POST"));
  getAndHead(app, "/v1/chat/completions/:id", stored.getCompletion);
  app.post("/v1/chat/completions/:id", stored.updateCompletion);
  app.delete("/v1/chat/completions/:id", stored.deleteCompletion);
  app.all("/v1/chat/completions/:id", onlyMethods("GET", "HEAD", "POST", "DELETE"));
  getAndHead(app, "/v1/chat/completions/:id/messages", stored.listMessages);
  app.all("/v1/chat/completions/:id/messages", onlyMethods("GET", "HEAD"));
  const responses = createResponsesHandlers(ctx);
  app.post("/v1/responses", responses.createResponse);
  app.all("/v1/responses", onlyMethods("POST"));
  app.get("/v1/responses/:id", responses.getResponse);
  app.delete("/v1/responses/:id", responses.deleteResponse);
  app.all("/v1/responses/:id", onlyMethods("GET", "DELETE"));
  app.post("/v1/responses/:id/cancel", responses.cancelResponse);
  app.all("/v1/responses/:id/cancel", onlyMethods("POST"));
  app.get("/v1/responses/:id/input_items", responses.listInputItems);
  app.all("/v1/responses/:id/input_items", onlyMethods("GET"));
  const images = createImageHandlers(ctx);
  app.post("/v1/images/generations", images.generateImages);
  app.all("/v1/images/generations", onlyMethods("POST"));
  // Outside /v1: an image URL needs no API key, its token is the credential (contract §9).
  getAndHead(app, `${IMAGE_FILES_PATH}/:name`, images.getImageFile);
  app.all(`${IMAGE_FILES_PATH}/:name`, onlyMethods("GET", "HEAD"));
  getAndHead(app, "/v1/models", createModelsHandler(ctx.models.entries));
  app.all("/v1/models", onlyMethods("GET", "HEAD"));
  app.all("/healthz", onlyMethods("GET", "HEAD"));
  return app;
}
