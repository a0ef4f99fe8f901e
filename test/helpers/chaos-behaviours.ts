/**
 * What the chaos upstream (`chaos-upstream.ts`) can be told to do with a request, and the
 * deterministic answer it gives when it answers: tokens `t0 t1 … t{N-1}`, so a test can tell that a
 * stream repaired by continuation (a broken stream finished by another target) has no repeated
 * and no missing text.
 *
 * @example
 * up.script({ ...CHAOS_ERRORS.rateLimit, retryAfter: "1" }, { cutAfter: 3 }, "ok");
 * expect(text).toBe(answerText(8));
 */

/** How an answer is shaped and paced; every field is optional. */
export interface AnswerShape {
  /** How many tokens the whole answer has; default the upstream's `tokens` option (8). */
  tokens?: number;
  /** Streams: wait this long after the headers (and role / message_start events) before the first token. JSON: before the reply. */
  delayFirstTokenMs?: number;
  /** Streams: wait this long between token events. */
  gapMs?: number;
  /**
   * Where each token's space goes: `leading` (default: `t0`, ` t1`, ` t2`: text sent so far never
   * ends in a space) or `trailing` (`t0 `, `t1 `, …, `t{N-1}`: text cut mid-answer ends in a space,
   * which Anthropic refuses as a prefill).
   */
  spacing?: "leading" | "trailing";
}

/** Why an error reply is sent; it picks the provider's error type, code and message. */
export type ErrorReason = "rate_limit" | "server_error" | "overloaded" | "context_length_exceeded" | "content_policy" | "prefill" | "invalid_request" | "not_found" | "timeout";

/** Answer `status` with the provider's error body. */
export interface StatusBehaviour {
  status: number;
  /** Default from the status: 429 rate_limit, 503 and 529 overloaded, 504 timeout, other 5xx server_error, 404 not_found, other 4xx invalid_request. */
  reason?: ErrorReason;
  /** The error's message instead of the provider's usual one for `reason`. */
  message?: string;
  /** `retry-after` header: seconds (`"2"`) or an HTTP date. */
  retryAfter?: string;
  /** `retry-after-ms` header (OpenAI sends it besides `retry-after`). */
  retryAfterMs?: number;
  /** Send this body verbatim (an HTML error page from a proxy, say) instead of the provider's error body. */
  body?: string;
}

/**
 * One scripted behaviour. The plain names are shorthands for the objects without options
 * (`"ok"` is `{ ok: true }`).
 */
export type ChaosBehaviour =
  | "ok"
  | "reset"
  | "hang"
  | "noDone"
  | "refusePrefill"
  /** Answer in full (JSON or stream, as the request asks); continues an assistant prefill. */
  | ({ ok: true } & AnswerShape)
  | StatusBehaviour
  /** Streams: N tokens, then the connection ends with no finish reason, usage or end marker. JSON: half the body, then the connection ends. */
  | ({ cutAfter: number } & AnswerShape)
  /** Streams: N tokens, then silence with the connection open until the client leaves. JSON: half the body, then silence. */
  | ({ stallAfter: number } & AnswerShape)
  /** Streams: N tokens, then one event whose data is not JSON, then the rest (`continue`, default) or a clean end (`end`). JSON: a 200 body that is not JSON. */
  | ({ malformedAfter: number; then?: "continue" | "end" } & AnswerShape)
  /**
   * Streams: N tokens, then the provider's error event (OpenAI `data: {"error": …}`, Anthropic
   * `event: error`) and the end; `reason` default `overloaded`. JSON: the error status for `reason`.
   */
  | ({ errorAfter: number; reason?: ErrorReason; message?: string } & AnswerShape)
  /** Streams: the whole answer with its finish reason and usage, but no end marker (`data: [DONE]`; Anthropic: `message_stop`). JSON: as `ok`. */
  | ({ noDone: true } & AnswerShape)
  /**
   * The first request that takes it and every request in the next `downFor` ms answer `status`
   * (503); requests in that window take nothing from the script. The window opens once per
   * behaviour object: taken again later (as the default, say), it answers `ok`.
   */
  | { downFor: number; status?: number; retryAfter?: string }
  /** A request whose last message is the assistant's gets a 400 (reason `prefill`); any other is answered `ok`. */
  | ({ refusePrefill: true } & AnswerShape);

/** What an attempt was given, by name: `attempts[i].behaviour`. */
export type ChaosKind = "ok" | "status" | "reset" | "hang" | "cutAfter" | "stallAfter" | "malformedAfter" | "errorAfter" | "noDone" | "downFor" | "refusePrefill";

/** A behaviour with its name and its options in one flat object. */
export interface ChaosStep extends AnswerShape {
  kind: ChaosKind;
  /** cutAfter, stallAfter, malformedAfter, errorAfter: the tokens sent before the failure. */
  after?: number;
  then?: "continue" | "end";
  /** status, downFor, refusePrefill: the error reply. */
  error?: StatusBehaviour;
  /** errorAfter: the error the stream's error event carries (its status is used for a JSON request). */
  streamError?: StatusBehaviour;
  /** downFor: the window. */
  windowMs?: number;
}

/** The error presets of the task at hand; spread one to add a `retryAfter`. */
export const CHAOS_ERRORS = {
  rateLimit: { status: 429, reason: "rate_limit" },
  serverError: { status: 500, reason: "server_error" },
  unavailable: { status: 503, reason: "overloaded" },
  /** Anthropic's "overloaded" status. */
  overloaded: { status: 529, reason: "overloaded" },
  contextLengthExceeded: { status: 400, reason: "context_length_exceeded" },
  contentPolicy: { status: 400, reason: "content_policy" },
} as const satisfies Record<string, StatusBehaviour>;

/** Reads a behaviour as a step. */
export function stepOf(behaviour: ChaosBehaviour): ChaosStep {
  if (typeof behaviour === "string") {
    if (behaviour === "refusePrefill") return { kind: behaviour, error: { status: 400, reason: "prefill" } };
    return { kind: behaviour };
  }
  if ("downFor" in behaviour) {
    const { downFor, status = 503, retryAfter } = behaviour;
    return { kind: "downFor", windowMs: downFor, error: { status, ...(retryAfter === undefined ? {} : { retryAfter }) } };
  }
  if ("status" in behaviour) return { kind: "status", error: behaviour };
  if ("cutAfter" in behaviour) return { ...shapeOf(behaviour), kind: "cutAfter", after: behaviour.cutAfter };
  if ("stallAfter" in behaviour) return { ...shapeOf(behaviour), kind: "stallAfter", after: behaviour.stallAfter };
  if ("malformedAfter" in behaviour) return { ...shapeOf(behaviour), kind: "malformedAfter", after: behaviour.malformedAfter, then: behaviour.then ?? "continue" };
  if ("errorAfter" in behaviour) {
    const { errorAfter, reason = "overloaded", message } = behaviour;
    return { ...shapeOf(behaviour), kind: "errorAfter", after: errorAfter, streamError: { status: statusOf(reason), reason, ...(message === undefined ? {} : { message }) } };
  }
  if ("noDone" in behaviour) return { ...shapeOf(behaviour), kind: "noDone" };
  if ("refusePrefill" in behaviour) return { ...shapeOf(behaviour), kind: "refusePrefill", error: { status: 400, reason: "prefill" } };
  return { ...shapeOf(behaviour), kind: "ok" };
}

function shapeOf({ tokens, delayFirstTokenMs, gapMs, spacing }: AnswerShape): AnswerShape {
  return { tokens, delayFirstTokenMs, gapMs, spacing };
}

/** The reason an error status has when a behaviour names none. */
export function reasonOf(error: StatusBehaviour): ErrorReason {
  if (error.reason) return error.reason;
  const { status } = error;
  if (status === 429) return "rate_limit";
  if (status === 503 || status === 529) return "overloaded";
  if (status === 504 || status === 408) return "timeout";
  if (status >= 500) return "server_error";
  return status === 404 ? "not_found" : "invalid_request";
}

/** The status an error reply for `reason` has (what a JSON request gets where a stream gets an error event). */
function statusOf(reason: ErrorReason): number {
  const statuses: Record<ErrorReason, number> = { rate_limit: 429, server_error: 500, overloaded: 503, timeout: 504, not_found: 404, context_length_exceeded: 400, content_policy: 400, prefill: 400, invalid_request: 400 };
  return statuses[reason];
}

/** The whole answer's pieces, one per token: `["t0", " t1", …]` (or `["t0 ", "t1 ", …, "t7"]` trailing). */
export function answerDeltas(tokens: number, spacing: AnswerShape["spacing"] = "leading"): string[] {
  return Array.from({ length: tokens }, (_, i) => {
    if (spacing === "trailing") return i === tokens - 1 ? `t${i}` : `t${i} `;
    return i === 0 ? "t0" : ` t${i}`;
  });
}

/** The whole answer's text: `"t0 t1 … t{N-1}"`, whatever the spacing. */
export function answerText(tokens: number): string {
  return answerDeltas(tokens).join("");
}

/**
 * The pieces that answer a request: the whole answer, or, when the request ends with an assistant
 * message whose text is a prefix of the whole answer, the rest of it after that prefix, split at
 * the same token boundaries. A prefill that is not a prefix gets the whole answer again (a
 * repaired stream then shows the repeat).
 */
export function deltasFor(tokens: number, spacing: AnswerShape["spacing"], prefill: string | undefined): string[] {
  const whole = answerDeltas(tokens, spacing);
  if (prefill === undefined || !whole.join("").startsWith(prefill)) return whole;
  const rest: string[] = [];
  let consumed = 0;
  for (const piece of whole) {
    const end = consumed + piece.length;
    if (end > prefill.length) rest.push(consumed >= prefill.length ? piece : piece.slice(prefill.length - consumed));
    consumed = end;
  }
  return rest;
}
