/**
 * Reads a JSON request body with the checks of docs/interface.md, "Request bodies", in this order:
 * 415 for a body that is not declared JSON, 413 for one over `x.bodyLimit` (the `bodyLimit`
 * middleware's; from content-length when sent, else while reading), 400 for one nested deeper
 * than `MAX_BODY_DEPTH` and for one that does not parse. Every JSON body of every endpoint comes through here, so these
 * checks hold before any other work.
 */
import { bodyTooLarge, invalidRequest, unsupportedMediaType } from "../errors.ts";
import type { Exchange } from "./exchange.ts";
import { findExcessNesting, MAX_BODY_DEPTH, nestingPath } from "../utils/json-nesting.ts";
import { findJsonSyntaxError } from "../utils/json-syntax-error.ts";

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** A UTF-8 byte order mark: some Windows tools put one before a JSON body (RFC 8259 §8.1 lets a reader ignore it). */
function bomLength(raw: Buffer): number {
  return raw.length >= 3 && raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf ? 3 : 0;
}

/**
 * Returns the parsed JSON body of a POST.
 * @throws 415, 413 or 400 in the envelope
 */
export async function readJsonBody(x: Exchange): Promise<unknown> {
  const limit = x.bodyLimit;
  const contentType = x.header("content-type");
  if (!contentType || !JSON_TYPE.test(contentType)) throw unsupportedMediaType(contentType ?? null);
  const declared = x.header("content-length");
  if (declared !== undefined && Number(declared) > limit) throw bodyTooLarge(limit);
  const raw = await x.readBody(limit);
  x.bodyBytes = raw.length;
  const start = bomLength(raw);
  if (raw.length === start) throw invalidRequest("Request body is empty; send a JSON object.", { code: "missing_field", param: null });
  const excess = findExcessNesting(raw);
  if (excess >= 0) {
    const param = nestingPath(raw, excess);
    const rule = `a request body may nest objects and arrays at most ${MAX_BODY_DEPTH} levels deep`;
    throw invalidRequest(`${param}: nested too deeply; ${rule} (a JSON Schema can use $defs and $ref instead of nesting).`, {
      code: "nesting_too_deep",
      param,
    });
  }
  const text = raw.toString("utf8", start);
  try {
    return JSON.parse(text);
  } catch {
    // V8's message quotes the body: say where it breaks instead, in our words.
    const at = findJsonSyntaxError(text);
    const where = at ? `: ${at.reason} at line ${at.line}, column ${at.column} (character ${at.offset})` : "";
    throw invalidRequest(`Request body is not valid JSON${where}.`, { code: "invalid_json", param: null });
  }
}
