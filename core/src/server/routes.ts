/**
 * The router's routes: every path it serves, with its handler per method, put on the h3 app by
 * `route-handlers.ts`. GET paths answer HEAD too (load balancers' health checks use it),
 * except the forwarded responses API. Authentication applies to `/v1/` paths (`middleware/auth.ts`).
 * The OpenAPI document (`openapi/document.ts`) describes each of them: a route added here goes there too.
 */
import type { AppContext } from "../app-context.ts";
import { createChatCompletionHandler } from "../chat/endpoint.ts";
import { createEmbeddingsHandler } from "../embeddings/endpoint.ts";
import { createReadyzHandler } from "../health/endpoint.ts";
import { createImageHandlers } from "../images/endpoint.ts";
import { createModelsHandlers } from "../models/endpoint.ts";
import { createResponsesHandlers } from "../responses/endpoint.ts";
import { createStatusPageHandlers } from "../status-page/endpoint.ts";
import { createStoredCompletionHandlers } from "../stored/endpoint.ts";
import { jsonTextReply } from "./reply.ts";
import type { Handler, Route } from "./route-handlers.ts";
import { IMAGE_FILES_PATH } from "../images/image-store.ts";
import { openApiJson } from "./openapi/document.ts";
import { requireAdmin } from "./auth/admin.ts";
import { createMetricsHandler } from "../operations/metrics-endpoint.ts";
import { createUsageHandler } from "../usage/endpoint.ts";

const HEALTHY = jsonTextReply('{"status":"ok"}');

function health() {
  return HEALTHY;
}

/** GET and HEAD with one handler. */
function getAndHead(handler: Handler) {
  return { GET: handler, HEAD: handler };
}

export function createRoutes(ctx: AppContext): Route[] {
  const stored = createStoredCompletionHandlers(ctx);
  const responses = createResponsesHandlers(ctx);
  const images = createImageHandlers(ctx);
  const statusPage = createStatusPageHandlers(ctx);
  const models = createModelsHandlers(ctx.models);
  const openApi = jsonTextReply(openApiJson());
  const openApiDocument = () => openApi;
  return [
    { path: "/healthz", methods: getAndHead(health) },
    { path: "/readyz", methods: getAndHead(createReadyzHandler(ctx.checkReadiness)) },
    { path: "/v1/chat/completions", methods: { ...getAndHead(stored.listCompletions), POST: createChatCompletionHandler(ctx) } },
    { path: "/v1/chat/completions/:id", methods: { ...getAndHead(stored.getCompletion), POST: stored.updateCompletion, DELETE: stored.deleteCompletion } },
    { path: "/v1/chat/completions/:id/messages", methods: getAndHead(stored.listMessages) },
    { path: "/v1/responses", methods: { POST: responses.createResponse } },
    { path: "/v1/responses/:id", methods: { GET: responses.getResponse, DELETE: responses.deleteResponse } },
    { path: "/v1/responses/:id/cancel", methods: { POST: responses.cancelResponse } },
    { path: "/v1/responses/:id/input_items", methods: { GET: responses.listInputItems } },
    { path: "/v1/images/generations", methods: { POST: images.generateImages } },
    { path: "/v1/embeddings", methods: { POST: createEmbeddingsHandler(ctx) } },
    // Outside /v1: an image URL needs no API key, its token is the credential
    // (docs/interface.md, "Images").
    { path: `${IMAGE_FILES_PATH}/:name`, methods: getAndHead(images.getImageFile) },
    { path: "/v1/models", methods: getAndHead(models.listModels) },
    // The rest of the path: a `provider/model` as the SDKs send it (`echo%2Fecho-1`) or as is.
    { path: "/v1/models/**:model", methods: getAndHead(models.getModel) },
    { path: "/v1/usage", methods: getAndHead(requireAdmin(ctx.authenticate, createUsageHandler(ctx))) },
    // Public, like /healthz: the interface, not the config (docs/interface.md, "OpenAPI description").
    { path: "/openapi.json", methods: getAndHead(openApiDocument) },
    // Admin keys only, outside /v1 as Prometheus expects (README, "Metrics").
    { path: "/metrics", methods: getAndHead(requireAdmin(ctx.authenticate, createMetricsHandler(ctx))) },
    // The page asks for an admin key itself; its figures need one (README, "Status page").
    { path: "/ui", methods: getAndHead(statusPage.page) },
    { path: "/ui/status.json", methods: getAndHead(statusPage.status) },
  ];
}
