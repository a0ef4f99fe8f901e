/**
 * The token usage of a forwarded responses reply, for rate limits and the access log. A Response
 * object is a few kilobytes (its output, its tools, its settings) and only its `usage` is needed:
 * that object is found from the end of the text (`usage` is among the last keys OpenAI writes;
 * after it come only `user` and the string map `metadata`) and parsed alone, once the text after
 * it shows that it is the Response's own `usage`, not one nested deeper. When that does not give
 * a usage (another key order, pretty-printed JSON), the whole text is parsed.
 */
import type { Usage } from "../types/chat.ts";
import { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, OPEN_ARRAY, OPEN_OBJECT, QUOTE } from "../utils/json-chars.ts";

/** A responses `usage` (`input_tokens`, `output_tokens`) in the chat shape the core counts in. */
export function toChatUsage(usage: unknown): Usage | undefined {
  if (typeof usage !== "object" || usage === null) return undefined;
  const { input_tokens: input, output_tokens: output, total_tokens: total } = usage as Record<string, unknown>;
  if (typeof input !== "number" || typeof output !== "number") return undefined;
  return { prompt_tokens: input, completion_tokens: output, total_tokens: typeof total === "number" ? total : input + output };
}

/** The usage in a Response object (a JSON reply, or the `response` of a terminal event). */
export function usageOfResponse(response: unknown): Usage | undefined {
  return typeof response === "object" && response !== null ? toChatUsage((response as { usage?: unknown }).usage) : undefined;
}

const WHITESPACE = /^\s*$/;

/**
 * Walks `text` from `from` with the nesting depth at 0, strings (escapes included) skipped; the
 * index of the `}` or `]` that brings the depth to `depth`, or -1.
 */
function closingAt(text: string, from: number, depth: number): number {
  let at = 0;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === BACKSLASH) i++;
        else if (s === QUOTE) break;
      }
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) at++;
    else if ((c === CLOSE_OBJECT || c === CLOSE_ARRAY) && --at === depth) return i;
  }
  return -1;
}

/**
 * Whether, from `from` on, `text` closes exactly `levels` objects or arrays and then ends: what
 * follows a member of the object `levels - 1` below the outermost one (1: the outermost itself).
 */
function endsAfterClosing(text: string, from: number, levels: number): boolean {
  const last = closingAt(text, from, -levels);
  return last >= 0 && WHITESPACE.test(text.slice(last + 1));
}

/**
 * The last `"usage":{…}` object of `text`, parsed, when it is a responses usage and a member of
 * the object `levels - 1` below the outermost one (1: the Response itself; 2: the `response` of
 * an event).
 */
function lastUsageObject(text: string, levels: number): Usage | undefined {
  const key = text.lastIndexOf('"usage":{');
  if (key < 0) return undefined;
  const start = key + 8;
  const end = closingAt(text, start, 0); // the `}` of the object opening at `start`
  if (end < 0 || !endsAfterClosing(text, end + 1, levels)) return undefined;
  try {
    return toChatUsage(JSON.parse(text.slice(start, end + 1)));
  } catch {
    return undefined;
  }
}

/** The usage of a Response object's JSON text; undefined for a reply that is not JSON or has none. */
export function usageOfResponseText(text: string): Usage | undefined {
  const usage = lastUsageObject(text, 1);
  if (usage) return usage;
  try {
    return usageOfResponse(JSON.parse(text));
  } catch {
    return undefined; // Not JSON: relayed as is all the same; it only has no usage to count.
  }
}

const TERMINAL_EVENTS = new Set(["response.completed", "response.incomplete", "response.failed"]);
/** A terminal event's data as OpenAI writes it: its type first. */
const TERMINAL_TYPE = /^\{"type":"response\.(?:completed|incomplete|failed)"/;

/** The usage of one event's data (JSON), when it is a terminal responses event. */
export function usageOfEventData(data: string): Usage | undefined {
  if (TERMINAL_TYPE.test(data)) {
    const usage = lastUsageObject(data, 2);
    if (usage) return usage;
  }
  try {
    const parsed = JSON.parse(data) as { type?: unknown; response?: unknown };
    return typeof parsed.type === "string" && TERMINAL_EVENTS.has(parsed.type) ? usageOfResponse(parsed.response) : undefined;
  } catch {
    return undefined;
  }
}
