/**
 * Reads a JSON request body with the checks of contract §7, in this order: 415 for a body that is
 * not declared JSON, 413 for one over `server.body_limit` (from content-length when sent, else
 * while reading), 400 for one that does not parse.
 */
import { bodyTooLarge, invalidRequest, unsupportedMediaType } from "../errors.ts";
import type { Exchange } from "../http/exchange.ts";

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * Returns the parsed JSON body of a POST.
 * @throws 415, 413 or 400 in the envelope
 */
export async function readJsonBody(x: Exchange, limit: number): Promise<unknown> {
  const contentType = x.header("content-type");
  if (!contentType || !JSON_TYPE.test(contentType)) throw unsupportedMediaType(contentType ?? null);
  const declared = x.header("content-length");
  if (declared !== undefined && Number(declared) > limit) throw bodyTooLarge(limit);
  const raw = await x.readBody(limit);
  if (raw.length === 0) throw invalidRequest("Request body is empty; send a JSON object.", { code: "missing_field", param: null });
  try {
    return JSON.parse(raw.toString("utf8"));
  } catch (error) {
    throw invalidRequest(`Request body is not valid JSON: ${(error as Error).message}`, { code: "invalid_json", param: null });
  }
}
