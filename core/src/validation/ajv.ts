/**
 * The one validation module: the Ajv instance factory, the translation of an Ajv error into the
 * envelope's `message`/`param`/`code` (docs/interface.md, "Request bodies"), and the compile-once
 * helper used for request bodies. The config loader and the plugin loader use the same two
 * functions.
 */
import { Ajv, type ErrorObject, type Options, type Schema } from "ajv";
import addFormatsImport, { type FormatsPlugin } from "ajv-formats";
import { invalidRequest } from "../errors.ts";
import { appendKey, joinPath, pathFromPointer } from "./error-path.ts";
import { describeRule } from "./error-rules.ts";

// ajv-formats is CommonJS: under NodeNext types the default import is the module object, at runtime
// it is sometimes the function itself. Accept both rather than depend on the loader's interop.
const addFormats: FormatsPlugin =
  (addFormatsImport as unknown as { default?: FormatsPlugin }).default ?? (addFormatsImport as unknown as FormatsPlugin);

/** The `code` of a schema error in the envelope (docs/interface.md, "Errors"). */
export type ValidationErrorCode = "missing_field" | "invalid_value" | "unknown_field";

/** An Ajv error turned into the parts of the error envelope. */
export interface FormattedValidationError {
  /** `<param>: <rule>`, e.g. `temperature: must be <= 2`; just the rule when the error is at the root. */
  message: string;
  /** The path of the offending field, e.g. `messages[0].role`; null for the root itself. */
  param: string | null;
  code: ValidationErrorCode;
}

/**
 * Creates the Ajv instance. Compile every schema once at start-up and reuse the validator.
 *
 * `strict: true` turns typos in our own schemas (an unknown keyword, a `required` property that is
 * never defined, `maximum` on a string) into compile errors instead of silently weaker checks.
 * `allErrors` is false by default: a request body's first error is reported, and stopping there is
 * cheaper. The config and plugin options turn it on, with `verbose` (for "did you mean"): they are
 * read once, and `modelmux check` reports every problem.
 * Union types (`["string", "null"]`) are how our schemas say "optional fields may be null".
 *
 * @param overrides Ajv options that win over ours, e.g. `{ useDefaults: true }` for plugin options.
 * @example
 * const ajv = createAjv();
 * const validate = ajv.compile({ type: "object", properties: { port: { type: "integer" } } });
 */
export function createAjv(overrides: Options = {}): Ajv {
  const ajv = new Ajv({ strict: true, allErrors: false, allowUnionTypes: true, ...overrides });
  addFormats(ajv);
  ajv.addFormat("http-url", isHttpUrl);
  return ajv;
}

/**
 * The `http-url` format, for plugins' `base_url` options: an absolute http or https URL. `uri`
 * alone accepts `localhost:8080` (scheme "localhost"), a common slip in a config.
 */
function isHttpUrl(value: string): boolean {
  if (!/^https?:\/\//i.test(value)) return false;
  try {
    return new URL(value).host !== "";
  } catch {
    return false;
  }
}

/**
 * Turns one Ajv error into a message that names the field and the rule, and the field's path in
 * the contract's form: array indices in brackets, keys dotted (`messages[0].content[1].image_url.url`,
 * `logit_bias.50256`, `providers.openai.base_url`).
 *
 * @param root A path to prefix, e.g. `providers.openai` when validating that block of the config.
 * @param data The value that was validated. With it, a digit key of an object (`logit_bias.50256`)
 *   is told apart from an array index; without it, digit segments are taken for indices.
 * @param siblings Names known beside the schema's own, for "did you mean" (see `describeRule`).
 * @example
 * formatAjvError(validate.errors[0], undefined, body)
 * // { message: "temperature: must be <= 2", param: "temperature", code: "invalid_value" }
 */
export function formatAjvError(error: ErrorObject, root?: string, data?: unknown, siblings?: readonly string[]): FormattedValidationError {
  const path = joinPath(root, pathFromPointer(error.instancePath, data));
  const { field, rule, code } = describeRule(error, siblings);
  const param = field === undefined ? path : appendKey(path, field);
  return { message: param ? `${param}: ${rule}` : capitalize(rule), param: param || null, code };
}

/**
 * A rule between fields, checked after the schema passed. JSON Schema can say these with if/then,
 * but Ajv then reports the field that is missing, not the one that needs it
 * (`logprobs: must be equal to constant` instead of `top_logprobs: requires logprobs to be true`).
 */
export interface CrossFieldRule<T> {
  /** The field reported as `param`, e.g. `top_logprobs`. */
  param: string;
  /** The rule, reported as `<param>: <message>`, e.g. `requires logprobs to be true`. */
  message: string;
  /** Default `invalid_value`; `missing_field` when the rule demands a field. */
  code?: ValidationErrorCode;
  /** True when `value`, which already passed the schema, breaks the rule. */
  isBroken(value: T): boolean;
}

export interface CompileValidatorOptions<T> {
  /** Prefix of every reported path (see {@link formatAjvError}). */
  root?: string;
  /** Checked in order after the schema passed; the first broken rule is reported. */
  rules?: readonly CrossFieldRule<T>[];
}

/**
 * Compiles a schema once and returns a validator that gives the value back typed, or throws the
 * 400 `invalid_request_error` (docs/interface.md, "Request bodies") for the first error.
 *
 * @example
 * const validateChat = compileValidator<ChatRequest>(ajv, chatRequestSchema, { rules: chatRequestRules });
 * const request = validateChat(body); // throws ModelmuxError (400) when the body is invalid
 */
export function compileValidator<T>(
  ajv: Ajv,
  schema: Schema | Record<string, unknown>,
  opts: CompileValidatorOptions<T> = {},
): (value: unknown) => T {
  const validate = ajv.compile(schema as Schema);
  const { root, rules = [] } = opts;
  return function validateValue(value: unknown): T {
    if (!validate(value)) {
      // Read the first error at once: `validate.errors` is overwritten by the next call.
      const first = validate.errors?.[0];
      if (!first) throw invalidRequest("Invalid value", { param: root || null });
      const { message, param, code } = formatAjvError(first, root, value);
      throw invalidRequest(message, { code, param });
    }
    const typed = value as T;
    for (const rule of rules) {
      if (rule.isBroken(typed)) {
        const param = joinPath(root, rule.param);
        throw invalidRequest(`${param}: ${rule.message}`, { code: rule.code ?? "invalid_value", param });
      }
    }
    return typed;
  };
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
