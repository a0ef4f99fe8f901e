/**
 * The transport every HTTP provider shares: one POST of a JSON body with the call's abort notice
 * and timeout, error replies mapped by the plugin, and a 200 reply's body
 * read and parsed. What stays in the plugin is provider-specific: the URL, the headers, the request
 * and reply mapping, and how an error body reads (`toError`).
 */
import { upstreamError, type ModelmuxError } from "../errors.ts";
import { UPSTREAM_BODY_TOO_LARGE } from "./body-limit.ts";
import { toBodyReadError, type AbortHook, type HttpRequest, type HttpResponse } from "./client.ts";
import type { PluginContext, ProviderCall } from "../plugin.ts";
import { ABORT_HOOK, TAKE_REPLY, type ReplyTaker } from "./provider-call.ts";
import { findExcessNestingInText, MAX_UPSTREAM_DEPTH } from "../utils/json-nesting.ts";

/** An upstream error reply (status >= 300), its body already read as text ("" if unreadable). */
export interface UpstreamErrorReply {
  status: number;
  text: string;
  headers: HttpResponse["headers"];
}

/** What `postUpstream` sends, and how it maps an error reply. */
export interface UpstreamRequest {
  url: string;
  /** Sent as given: include `content-type` and the credentials. */
  headers: Record<string, string>;
  /** Serialised with `JSON.stringify`. */
  body: unknown;
  /**
   * Maps an error reply to the error thrown, usually with `providerError`. Its message is logged
   * at debug level and sent to the client, so it must already have any credential removed.
   */
  toError(reply: UpstreamErrorReply): ModelmuxError;
}

/**
 * POSTs a JSON body to the upstream through `ctx.http`, passing the call's abort notice (the client
 * went away, or the core stopped reading: `call.signal`), its timeout, and `ctx.name` for
 * the core's timeout and connection errors. A reply with a status below 300 is returned with its
 * body unread; any other is thrown as `toError` maps it, after a debug log line with the request id
 * and the mapped (redacted) message, never the body or the headers. An error body over
 * `server.upstream_body_limit` is not read: a 502 naming the limit is thrown instead.
 * @example
 * const res = await postUpstream(ctx, call, {
 *   url: `${base}/v2/generate`,
 *   headers: { "content-type": "application/json", "x-parrot-key": key },
 *   body: toParrotRequest(request, call.model),
 *   toError: (reply) => toProviderError(ctx.name, reply),
 * });
 */
export async function postUpstream(ctx: PluginContext, call: ProviderCall, request: UpstreamRequest): Promise<HttpResponse> {
  // The fields sendUpstream reads, named: a spread copy with more keys after it takes V8's slow
  // path (about 2 µs on Node 20; docs/architecture.md, "Hot paths").
  return sendUpstream(ctx, call, { url: request.url, headers: request.headers, toError: request.toError, method: "POST", body: JSON.stringify(request.body) });
}

/** What `sendUpstream` sends: any method, a body already serialised (or none). */
export interface RawUpstreamRequest extends Omit<UpstreamRequest, "body"> {
  method: "GET" | "POST" | "DELETE";
  body?: string;
}

/**
 * `postUpstream` for any method and a body sent as given: for calls forwarded as they came (the
 * responses API), where re-serialising would change nothing but cost time. A reply below 300 is
 * handed to the core's call, which holds its whole-wait timeout when the core frames its stream
 * (`provider-call.ts`).
 */
export async function sendUpstream(ctx: PluginContext, call: Pick<ProviderCall, "signal" | "timeoutMs" | "requestId">, request: RawUpstreamRequest): Promise<HttpResponse> {
  const hook = abortHookOf(call);
  // The core's call carries the route's timeouts (`routing.timeouts.idle` and `.connect`).
  const { idleTimeoutMs, connectTimeoutMs } = call as { idleTimeoutMs?: number; connectTimeoutMs?: number };
  // Every field set, unset ones to undefined or 0: one object shape for every call, which keeps the
  // client's and the handler's reads of it monomorphic. The core's hook when the call has one:
  // reading `call.signal` would make its lazy AbortController.
  const req: HttpRequest = {
    url: request.url,
    method: request.method,
    headers: request.headers,
    body: request.body,
    timeoutMs: call.timeoutMs,
    idleTimeoutMs: idleTimeoutMs ?? 0,
    connectTimeoutMs: connectTimeoutMs ?? 0,
    provider: ctx.name,
    abort: hook,
    signal: hook === undefined ? call.signal : undefined,
  };
  const res = await ctx.http.request(req);
  if (res.status < 300) {
    // The core's call holds the deadline of a stream it frames until its first chunk (`provider-call.ts`).
    (call as Partial<ReplyTaker>)[TAKE_REPLY]?.(res.body);
    return res;
  }
  let text = "";
  try {
    text = await res.body.text();
  } catch (error) {
    // One over `server.upstream_body_limit` is a 502 that names the limit; any other failure of
    // the body only costs the message: the status is still mapped.
    if ((error as { code?: unknown } | null)?.code === UPSTREAM_BODY_TOO_LARGE) throw toBodyReadError(error, ctx.name, call.timeoutMs);
  }
  const error = request.toError({ status: res.status, text, headers: res.headers });
  ctx.logger.debug(`upstream replied ${res.status} to ${call.requestId}: ${error.message}`);
  throw error;
}

/**
 * The core's abort hook of `call` (`provider-call.ts`), unless the call has a `signal` of its own:
 * a plugin's copy `{ ...call, signal }`, whose signal also fires on a sibling call's failure, keeps
 * the hook it copied, but is heard through its signal. The core's call has `signal` as a getter on
 * its class, so never as its own property.
 */
function abortHookOf(call: object): AbortHook | undefined {
  return Object.hasOwn(call, "signal") ? undefined : (call as { [ABORT_HOOK]?: AbortHook })[ABORT_HOOK];
}

/**
 * Reads a 200 reply's whole body as text. A reply not complete within the call's timeout is a 504,
 * one that breaks off or outgrows `server.upstream_body_limit` a 502 (`toBodyReadError`); the
 * client's own abort is rethrown as is.
 * @example
 * const res = await postUpstream(ctx, call, { url, headers, body, toError });
 * return parseReplyText(await readUpstreamText(ctx, call, res), { provider: ctx.name, model: call.model });
 */
export async function readUpstreamText(ctx: PluginContext, call: ProviderCall, res: HttpResponse): Promise<string> {
  try {
    return await res.body.text();
  } catch (error) {
    throw toBodyReadError(error, ctx.name, call.timeoutMs);
  }
}

/**
 * Parses a 200 reply's text as JSON. A body that is not JSON (a proxy's HTML page) is the
 * upstream's failure: 502 `upstream_error` "<provider>: the reply is not valid JSON.", not a crash;
 * so is one nested more than `MAX_UPSTREAM_DEPTH` (256) levels deep, which would parse but overflow
 * the stack wherever it is serialised again (a tool call's arguments, the stored completion).
 * Pure, so a plugin's `text -> completion` mapping stays testable without a network.
 * @example
 * export const parseReplyText = (text: string, context: { provider: string; model: string }) =>
 *   toChatCompletion(parseUpstreamJson(text, context.provider), context);
 */
export function parseUpstreamJson(text: string, provider: string): unknown {
  const excess = findExcessNestingInText(text, MAX_UPSTREAM_DEPTH);
  if (excess !== undefined) throw upstreamError(`${provider}: the reply nests objects and arrays more than ${MAX_UPSTREAM_DEPTH} levels deep (at ${excess}).`);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw upstreamError(`${provider}: the reply is not valid JSON.`, error);
  }
}
