/**
 * Checks real replies against the OpenAPI document (docs/interface.md, "OpenAPI description"): finds
 * the reply the document declares for a path, method and status, and validates the body (each
 * `data:` event of a stream) with Ajv 2020 against the schema at that place in the document, its
 * `$ref`s resolved inside the document.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsImport, { type FormatsPlugin } from "ajv-formats";

// ajv-formats is CommonJS: the default import is the module object or the function, by loader.
const addFormats: FormatsPlugin =
  (addFormatsImport as unknown as { default?: FormatsPlugin }).default ?? (addFormatsImport as unknown as FormatsPlugin);

type Json = Record<string, unknown>;

export interface OpenApiDocument {
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, Json>; responses: Record<string, Json>; [kind: string]: Record<string, Json> };
}

const DOCUMENT_ID = "urn:modelmux:openapi";
const METHODS = ["get", "head", "post", "put", "patch", "delete", "options", "trace"];

/** A JSON pointer into the document, as a URI fragment. */
export function pointer(...segments: string[]): string {
  return `#/${segments.map((s) => encodeURIComponent(s.replaceAll("~", "~0").replaceAll("/", "~1"))).join("/")}`;
}

/**
 * An Ajv 2020 instance that holds the document, with the router's own strictness: a schema of the
 * document that uses an unknown keyword or contradicts itself fails to compile.
 */
export function documentAjv(document: OpenApiDocument): { at(fragment: string): ValidateFunction } {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  addFormats(ajv);
  // The document's own keywords are not schema keywords: known, never applied.
  ajv.addVocabulary(Object.keys(document));
  ajv.addSchema(document as unknown as Json, DOCUMENT_ID);
  const compiled = new Map<string, ValidateFunction>();
  return {
    at(fragment) {
      let validate = compiled.get(fragment);
      if (!validate) {
        validate = ajv.getSchema(`${DOCUMENT_ID}${fragment}`);
        if (!validate) throw new Error(`no schema at ${fragment}`);
        compiled.set(fragment, validate);
      }
      return validate;
    },
  };
}

/** The document's path template that `path` (no query) is an instance of, or undefined. */
export function templateOf(document: OpenApiDocument, path: string): string | undefined {
  return Object.keys(document.paths).find((template) => {
    const pattern = template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, "\\$&")).join("[^/]+");
    return new RegExp(`^${pattern}$`).test(path);
  });
}

export interface DeclaredReply {
  /** Where the reply object is in the document: the segments of its JSON pointer. */
  at: string[];
  reply: Json;
}

/**
 * The reply the document declares for `status` of `method` on `path`: the operation's own, else its
 * `default`; for a path it does not list, `NotFound`; for a method a path does not list,
 * `MethodNotAllowed` (as the document's description says). A string says why there is none.
 */
export function declaredReply(document: OpenApiDocument, path: string, method: string, status: number): DeclaredReply | string {
  const template = templateOf(document, path);
  const fallback = (name: string, expected: number): DeclaredReply | string =>
    status === expected ? { at: ["components", "responses", name], reply: document.components.responses[name]! } : `${method} ${path}: ${status}, not ${expected}`;
  if (template === undefined) return fallback("NotFound", 404);
  const lower = method.toLowerCase();
  const operation = document.paths[template]![lower] as { responses: Record<string, Json> } | undefined;
  if (!METHODS.includes(lower) || !operation) return fallback("MethodNotAllowed", 405);
  const key = String(status) in operation.responses ? String(status) : "default";
  const reply = operation.responses[key];
  if (!reply) return `${method} ${template}: status ${status} is not declared`;
  if (typeof reply.$ref === "string") {
    const name = reply.$ref.replace("#/components/responses/", "");
    return { at: ["components", "responses", name], reply: document.components.responses[name]! };
  }
  return { at: ["paths", template, lower, "responses", key], reply };
}

/** The JSON of each `data:` of a Server-Sent Events body, `[DONE]` left out. */
export function sseData(text: string): string[] {
  const data: string[] = [];
  for (const block of text.replaceAll("\r\n", "\n").split("\n\n")) {
    const lines = block.split("\n").filter((line) => line.startsWith("data:"));
    if (lines.length === 0) continue;
    const joined = lines.map((line) => line.slice(5).replace(/^ /, "")).join("\n");
    if (joined !== "[DONE]") data.push(joined);
  }
  return data;
}

/** Ajv's errors, readable in a failed expectation. */
export function errorsOf(validate: ValidateFunction): string {
  return (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`).join("; ");
}
