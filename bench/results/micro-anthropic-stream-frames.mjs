// core/src/errors.ts
var ModelmuxError = class extends Error {
  status;
  type;
  code;
  param;
  headers;
  /** Set when the error is a provider's reply (`providerError`): its status and Retry-After. */
  upstream;
  constructor(message, init) {
    super(message, init.cause === void 0 ? void 0 : { cause: init.cause });
    this.name = "ModelmuxError";
    this.status = init.status;
    this.type = init.type;
    this.code = init.code;
    this.param = init.param ?? null;
    this.headers = init.headers;
    this.upstream = init.upstream;
  }
  toEnvelope() {
    return { error: { message: this.message, type: this.type, code: this.code, param: this.param } };
  }
};
function upstreamError(message, cause) {
  return new ModelmuxError(message, { status: 502, type: "api_error", code: "upstream_error", cause });
}
function internalError(cause) {
  return new ModelmuxError("Internal error in modelmux. This is a bug; the request id identifies it in the router's log.", {
    status: 500,
    type: "api_error",
    code: "internal_error",
    cause
  });
}
function toModelmuxError(error) {
  if (error instanceof ModelmuxError) return error;
  return internalError(error);
}

// core/src/validation/error-path.ts
var PLAIN_KEY = /^[\w$-]+$/;
function joinPath(base, path) {
  if (!base) return path;
  if (!path) return base;
  return path.startsWith("[") ? `${base}${path}` : `${base}.${path}`;
}
function appendKey(path, key) {
  return joinPath(path, PLAIN_KEY.test(key) ? key : `[${JSON.stringify(key)}]`);
}

// core/src/utils/json-chars.ts
var QUOTE = 34;
var BACKSLASH = 92;
var OPEN_OBJECT = 123;
var CLOSE_OBJECT = 125;
var OPEN_ARRAY = 91;
var CLOSE_ARRAY = 93;
var COMMA = 44;
var COLON = 58;

// core/src/utils/json-nesting.ts
var MAX_BODY_DEPTH = 64;
var MAX_UPSTREAM_DEPTH = 256;
var SHORT_STRING = 48;
function endOfString(bytes, start) {
  const n = bytes.length;
  const stop = Math.min(n, start + SHORT_STRING);
  let i = start + 1;
  for (; i < stop; i++) {
    const c = bytes[i];
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i;
  }
  if (i >= n) return n;
  for (; ; ) {
    const quote = bytes.indexOf(QUOTE, i);
    if (quote < 0) return n;
    let k = quote - 1;
    while (bytes[k] === BACKSLASH) k--;
    if ((quote - k) % 2 === 1) return quote;
    i = quote + 1;
  }
}
function findExcessNesting(bytes, max = MAX_BODY_DEPTH) {
  const n = bytes.length;
  let depth = 0;
  for (let i = 0; i < n; i++) {
    const c = bytes[i];
    if (c === QUOTE) i = endOfString(bytes, i);
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > max) return i;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth--;
  }
  return -1;
}
function hasMoreBracketsThan(text, max) {
  let count = 0;
  for (let i = text.indexOf("{"); i >= 0; i = text.indexOf("{", i + 1)) if (++count > max) return true;
  for (let i = text.indexOf("["); i >= 0; i = text.indexOf("[", i + 1)) if (++count > max) return true;
  return false;
}
function findExcessNestingInText(text, max = MAX_BODY_DEPTH) {
  if (!hasMoreBracketsThan(text, max)) return void 0;
  const bytes = Buffer.from(text, "utf8");
  const excess = findExcessNesting(bytes, max);
  return excess < 0 ? void 0 : nestingPath(bytes, excess);
}
var MAX_KEY_CHARS = 40;
var MAX_PATH_CHARS = 120;
function keyAt(bytes, start, end) {
  if (end - start - 1 <= MAX_KEY_CHARS * 4) {
    try {
      const key = JSON.parse(bytes.toString("utf8", start, end + 1));
      return key.length <= MAX_KEY_CHARS ? key : `${key.slice(0, MAX_KEY_CHARS)}\u2026`;
    } catch {
    }
  }
  return `${bytes.toString("utf8", start + 1, Math.min(end, start + 1 + MAX_KEY_CHARS))}\u2026`;
}
function nestingPath(bytes, offset) {
  const levels = [];
  for (let i = 0; i < offset; i++) {
    const c = bytes[i];
    const top = levels[levels.length - 1];
    if (c === QUOTE) {
      const end = endOfString(bytes, i);
      if (top && !top.array && top.expectsKey) top.key = keyAt(bytes, i, end);
      i = end;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) levels.push({ array: c === OPEN_ARRAY, index: 0, key: "", expectsKey: c === OPEN_OBJECT });
    else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) levels.pop();
    else if (top && c === COMMA) {
      if (top.array) top.index++;
      else top.expectsKey = true;
    } else if (top && c === COLON) top.expectsKey = false;
  }
  let path = "";
  for (const level of levels) {
    path = level.array ? `${path}[${level.index}]` : appendKey(path, level.key);
    if (path.length > MAX_PATH_CHARS) return `${path}\u2026`;
  }
  return path;
}

// core/src/chat/chunk-check.ts
function unreadableEvent(provider) {
  return upstreamError(`${provider}: the upstream sent a stream event that is not a chat.completion.chunk.`);
}
function unfinishedStream(provider, finishes, choices) {
  const which = choices > 1 ? `finish_reason for ${finishes} of ${choices} choices` : "no finish_reason";
  return upstreamError(`${provider}: the upstream stream ended before the answer was complete (${which}).`);
}
function parseEventData(data, maxDepth) {
  if (maxDepth !== void 0 && findExcessNestingInText(data, maxDepth) !== void 0) return void 0;
  try {
    return JSON.parse(data);
  } catch {
    return void 0;
  }
}
var TEXT_FIELDS = ["content", "refusal", "reasoning_content", "reasoning"];
function carriesContent(choice) {
  const { delta, finish_reason: reason } = choice;
  if (typeof reason === "string" && reason !== "") return true;
  if (typeof delta !== "object" || delta === null) return false;
  const fields = delta;
  for (const name of TEXT_FIELDS) {
    const text = fields[name];
    if (typeof text === "string" && text !== "") return true;
  }
  const { tool_calls: calls, function_call: call, audio } = fields;
  return Array.isArray(calls) && calls.length > 0 || typeof call === "object" && call !== null || typeof audio === "object" && audio !== null;
}
var DROP = 0;
var RELAY = 1;
var RELAY_WITHOUT_TIER = 2;
var ChunkCheck = class {
  constructor(options) {
    this.options = options;
    this.choices = options.choices ?? 1;
    this.finishedChoices = new Uint8Array(this.choices);
  }
  options;
  /** How many distinct choices have had their finish reason. */
  finishes = 0;
  /** The usage came after the last finish reason: the stream is complete, nothing more is needed. */
  complete = false;
  /** Some chunk so far carried content (`carriesContent`). */
  content = false;
  choices;
  /** A flag per choice index: it has had its finish reason (a repeated one counts once). */
  finishedChoices;
  /** Every choice has had its finish reason. */
  get finished() {
    return this.finishes >= this.choices;
  }
  /**
   * Takes one parsed event (`parseEventData`, or a provider's chunk object) and says what to do
   * with its text. Throws 502 `upstream_error` when it is not a chunk: not an object with a
   * `choices` array of objects whose `index` is one of the request's choices, or with a `usage`
   * that is neither an object nor null; and whatever `collect` throws.
   */
  take(value) {
    const { options } = this;
    if (typeof value !== "object" || value === null) throw unreadableEvent(options.provider);
    const chunk2 = value;
    const list = chunk2.choices;
    if (!Array.isArray(list)) throw unreadableEvent(options.provider);
    let content = false;
    for (let i = 0; i < list.length; i++) {
      this.takeChoice(list[i]);
      if (!this.content && !content) content = carriesContent(list[i]);
    }
    const usage = chunk2.usage;
    let use = RELAY;
    if (usage !== void 0 && usage !== null) {
      if (typeof usage !== "object" || Array.isArray(usage)) throw unreadableEvent(options.provider);
      options.onUsage?.(usage);
      if (this.finished) this.complete = true;
      if (list.length === 0 && !options.includeUsage) use = DROP;
    }
    options.collect?.(chunk2);
    if (content) {
      this.content = true;
      options.onContent?.();
    }
    if (use === RELAY && !options.keepServiceTier && chunk2.service_tier !== void 0) use = RELAY_WITHOUT_TIER;
    return use;
  }
  /** At the stream's end (`[DONE]` or the body's end): throws 502 `upstream_error` unless `finished`. */
  end() {
    if (!this.finished) throw unfinishedStream(this.options.provider, this.finishes, this.choices);
  }
  takeChoice(choice) {
    if (typeof choice !== "object" || choice === null) throw unreadableEvent(this.options.provider);
    const { finish_reason: reason } = choice;
    const index = choice.index ?? (this.choices === 1 ? 0 : void 0);
    if (typeof index !== "number" || index >>> 0 !== index || index >= this.choices) throw unreadableEvent(this.options.provider);
    if (typeof reason === "string" && reason !== "" && this.finishedChoices[index] === 0) {
      this.finishedChoices[index] = 1;
      this.finishes++;
    }
  }
};

// core/src/chat/assemble-completion.ts
var MAX_TOOL_CALL_INDEX = 1024;
function isRecord(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
function isToolCallIndex(value) {
  return Number.isInteger(value) && value >= 0 && value <= MAX_TOOL_CALL_INDEX;
}
function createCompletionAssembler(provider, limit) {
  const drafts = /* @__PURE__ */ new Map();
  let head;
  let usage;
  let kept = 0;
  const unreadable = () => unreadableEvent(provider);
  function keep(text) {
    kept += text.length;
    if (kept > limit) {
      throw upstreamError(
        `Provider '${provider}' sent a stream too long to store: its answer passed the limit of ${limit} characters (server.upstream_body_limit). Raise server.upstream_body_limit if its replies are this large.`
      );
    }
    return text;
  }
  function addToolCalls(draft, deltas) {
    if (deltas === void 0 || deltas === null) return;
    if (!Array.isArray(deltas)) throw unreadable();
    for (const delta of deltas) {
      if (!isRecord(delta) || !isToolCallIndex(delta.index)) throw unreadable();
      let call = draft.toolCalls.get(delta.index);
      if (!call) draft.toolCalls.set(delta.index, call = { id: "", type: "function", function: { name: "", arguments: "" } });
      const fn = isRecord(delta.function) ? delta.function : {};
      if (typeof delta.id === "string" && delta.id) call.id = keep(delta.id);
      if (typeof fn.name === "string") call.function.name += keep(fn.name);
      if (typeof fn.arguments === "string") call.function.arguments += keep(fn.arguments);
    }
  }
  function add(chunk2) {
    head ??= chunk2;
    if (isRecord(chunk2.usage)) usage = chunk2.usage;
    for (const c of chunk2.choices) {
      if (c.delta != null && !isRecord(c.delta)) throw unreadable();
      const index = c.index ?? 0;
      let draft = drafts.get(index);
      if (!draft) {
        draft = { content: "", refusal: "", hasContent: false, toolCalls: /* @__PURE__ */ new Map(), index, finish_reason: void 0, native_finish_reason: void 0 };
        drafts.set(index, draft);
      }
      const delta = isRecord(c.delta) ? c.delta : {};
      if (typeof delta.content === "string") {
        draft.content += keep(delta.content);
        draft.hasContent = true;
      }
      if (typeof delta.refusal === "string") draft.refusal += keep(delta.refusal);
      addToolCalls(draft, delta.tool_calls);
      if (typeof c.finish_reason === "string" && c.finish_reason) draft.finish_reason = c.finish_reason;
      if (typeof c.native_finish_reason === "string") draft.native_finish_reason = c.native_finish_reason;
    }
  }
  function completion() {
    const sorted = [...drafts.values()].sort((a, b) => a.index - b.index);
    const finished = sorted.filter((d) => d.finish_reason !== void 0).length;
    if (sorted.length === 0 || finished < sorted.length) throw unfinishedStream(provider, finished, Math.max(1, sorted.length));
    const choices = sorted.map((d) => {
      const toolCalls = [...d.toolCalls.entries()].sort((a, b) => a[0] - b[0]).map((entry) => entry[1]);
      return {
        index: d.index,
        finish_reason: d.finish_reason,
        ...d.native_finish_reason !== void 0 && { native_finish_reason: d.native_finish_reason },
        message: {
          role: "assistant",
          content: d.hasContent && (d.content !== "" || toolCalls.length === 0) ? d.content : null,
          ...d.refusal && { refusal: d.refusal },
          ...toolCalls.length > 0 && { tool_calls: toolCalls }
        }
      };
    });
    const top = { id: head?.id ?? "", object: "chat.completion", created: head?.created ?? Math.floor(Date.now() / 1e3), model: head?.model ?? "", choices };
    const tail = {
      ...head?.service_tier != null && { service_tier: head.service_tier },
      ...head?.system_fingerprint != null && { system_fingerprint: head.system_fingerprint }
    };
    return usage ? { ...top, usage, ...tail } : { ...top, ...tail };
  }
  return { add, completion };
}

// core/src/upstream/undici-parts.ts
import { createRequire } from "node:module";
var require2 = createRequire(import.meta.url);
var Agent = require2("undici/lib/dispatcher/agent.js");
var UndiciError = require2("undici/lib/core/errors.js").UndiciError;

// core/src/config/units.ts
var SIZE_UNITS = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };
var MAX_TIMER_MS = 2 ** 31 - 1;

// core/src/upstream/body-limit.ts
var DEFAULT_UPSTREAM_BODY_LIMIT = 64 * 1024 * 1024;

// core/src/upstream/reply-body.ts
var HIGH_WATER_MARK = 64 * 1024;
var DONE = Object.freeze({ done: true, value: void 0 });
var DONE_PROMISE = Promise.resolve(DONE);

// core/src/upstream/client.ts
var connectionFailures = /* @__PURE__ */ new WeakSet();
function isConnectionFailure(error) {
  return error instanceof ModelmuxError && connectionFailures.has(error);
}

// core/src/sse/write.ts
function sseData(data) {
  return `data: ${data}

`;
}
function sseDataLines(data) {
  return data.includes("\n") ? `data: ${data.replaceAll("\n", "\ndata: ")}

` : `data: ${data}

`;
}

// core/src/sse/tail.ts
var DONE_DATA = "[DONE]";
var DONE_FRAME = sseData(DONE_DATA);
function chatErrorFrame(error) {
  return sseData(JSON.stringify(toModelmuxError(error).toEnvelope()));
}

// core/src/chat/raw-json.ts
var OnAnyObject = class {
  constructor(value) {
    return value;
  }
};
var RawJson = class _RawJson extends OnAnyObject {
  #text;
  constructor(value, text) {
    super(value);
    this.#text = text;
  }
  static set(value, text) {
    if (#text in value) value.#text = text;
    else if (Object.isExtensible(value)) new _RawJson(value, text);
  }
  static get(value) {
    return #text in value ? value.#text : void 0;
  }
};
function rawJsonOf(value) {
  return RawJson.get(value);
}

// core/src/chat/service-tier.ts
var BEFORE_KEY = /"service_tier"\s*:\s*(?:"[^"\\]*"|null)\s*,/g;
var LAST_KEY = /,\s*"service_tier"\s*:\s*(?:"[^"\\]*"|null)(?=\s*})/g;
function removeServiceTier(text) {
  if (text.indexOf("service_tier") < 0) return text;
  const stripped = text.replace(BEFORE_KEY, "");
  return stripped.indexOf("service_tier") < 0 ? stripped : stripped.replace(LAST_KEY, "");
}

// core/src/chat/stream-end.ts
var STREAM_END_GRACE_MS = 1e3;
var GRACE_OVER = /* @__PURE__ */ Symbol("grace over");
async function readWithin(read, ms) {
  if (ms <= 0) {
    read.catch(ignore);
    return GRACE_OVER;
  }
  let timer;
  const over = new Promise((resolve) => timer = setTimeout(resolve, ms, GRACE_OVER));
  try {
    return await Promise.race([read, over]);
  } finally {
    clearTimeout(timer);
  }
}
function ignore() {
}

// core/src/chat/stream-frames.ts
var Framer = class {
  constructor(options) {
    this.options = options;
    this.chunks = new ChunkCheck(options);
  }
  options;
  /** Checks each item, follows the choices' finish reasons, reports the usage. */
  chunks;
  /** What ended the stream in the middle of a batch: thrown once the frames before it are sent. */
  failure;
  /** A read of the provider's items was left pending when the grace ran out. */
  readPending = false;
  /** When the grace after the last finish reason ends (`stream-end.ts`); 0 until then. */
  graceEnds = 0;
  /**
   * The frames of an item or a batch (one upstream read), joined: they are written together anyway.
   * Throws for an item that is not a chunk; one that follows other items of its batch is kept in
   * `failure` instead, and their frames are returned.
   */
  frame(value) {
    if (!Array.isArray(value)) return this.frameOfItem(value);
    const items = value;
    let text = "";
    for (let i = 0; i < items.length && !this.chunks.complete; i++) {
      try {
        text += this.frameOfItem(items[i]);
      } catch (error) {
        if (text === "") throw error;
        this.failure = error;
        break;
      }
    }
    return text;
  }
  /**
   * The next item or batch; undefined when the stream is over: once every choice has its finish
   * reason, when the grace has passed or the connection broke off.
   */
  async read(rest) {
    if (!this.chunks.finished) return rest.next();
    if (this.graceEnds === 0) this.graceEnds = Date.now() + STREAM_END_GRACE_MS;
    let result;
    try {
      result = await readWithin(rest.next(), this.graceEnds - Date.now());
    } catch (error) {
      if (isConnectionFailure(this.options.classify ? this.options.classify(error) : error)) return void 0;
      throw error;
    }
    if (result !== GRACE_OVER) return result;
    this.readPending = true;
    this.options.call?.cancel();
    return void 0;
  }
  /** The frame of one item; "" when it is dropped. */
  frameOfItem(item) {
    if (typeof item === "string") {
      const use2 = this.chunks.take(parseEventData(item, this.options.collect ? MAX_UPSTREAM_DEPTH : void 0));
      if (use2 === DROP) return "";
      return sseDataLines(use2 === RELAY_WITHOUT_TIER ? removeServiceTier(item) : item);
    }
    const use = this.chunks.take(item);
    if (use === DROP) return "";
    const text = rawJsonOf(item);
    if (text !== void 0) return sseData(use === RELAY_WITHOUT_TIER ? removeServiceTier(text) : text);
    if (use === RELAY_WITHOUT_TIER) {
      const { service_tier: _dropped, ...rest } = item;
      return sseData(JSON.stringify(rest));
    }
    return sseData(JSON.stringify(item));
  }
};
async function openChatStreamFrames(items, options) {
  const framer = new Framer(options);
  let first = "";
  try {
    while (first === "") {
      const read = await items.next();
      if (read.done) {
        framer.chunks.end();
        break;
      }
      first = framer.frame(read.value);
    }
  } catch (error) {
    await releaseItems(items);
    throw error;
  }
  options.call?.streaming();
  return chatStreamFrames(framer, first, items);
}
async function releaseItems(items) {
  try {
    await items.return?.();
  } catch {
  }
}
async function* chatStreamFrames(framer, first, rest) {
  const { options } = framer;
  try {
    let frame = first;
    for (; ; ) {
      if (frame) yield frame;
      if (framer.failure !== void 0) throw framer.failure;
      if (framer.chunks.complete) break;
      const result = await framer.read(rest);
      if (result === void 0 || result.done) break;
      frame = framer.frame(result.value);
    }
    if (options.clientGone()) return;
    framer.chunks.end();
    await options.beforeDone?.();
    yield DONE_FRAME;
  } catch (error) {
    if (options.clientGone()) return;
    const mapped = options.classify ? options.classify(error) : error;
    options.onError?.(mapped);
    yield chatErrorFrame(mapped);
  } finally {
    if (framer.readPending) void releaseItems(rest);
    else await rest.return?.();
  }
}

// core/src/chat/transcript.ts
var NOT_TEXT = ["tool_calls", "function_call", "refusal", "audio"];
var Transcript = class {
  id;
  model;
  created;
  /** The text of choice 0 so far. */
  text = "";
  /** Something other than text was sent (or a choice other than 0): no continuation. */
  notText = false;
  /** A finish reason was sent: the answer is over, nothing to continue. */
  finished = false;
  /** Takes one chunk the client gets (a `collect` of `chunk-check.ts`). */
  add = (chunk2) => {
    if (this.id === void 0 && typeof chunk2.id === "string") {
      this.id = chunk2.id;
      if (typeof chunk2.model === "string") this.model = chunk2.model;
      if (typeof chunk2.created === "number") this.created = chunk2.created;
    }
    for (const choice of chunk2.choices) {
      if ((choice.index ?? 0) !== 0) {
        this.notText = true;
        continue;
      }
      if (choice.finish_reason) this.finished = true;
      const delta = choice.delta;
      if (delta === void 0 || delta === null) continue;
      if (typeof delta.content === "string") this.text += delta.content;
      for (const key of NOT_TEXT) if (delta[key] !== void 0 && delta[key] !== null) this.notText = true;
    }
  };
  /** The text a continuation may start from: some text, and nothing else, with no finish reason yet. */
  get continuable() {
    return !this.notText && !this.finished && this.text.trimEnd() !== "";
  }
};

// plugins/provider-anthropic/src/stream.ts
import {
  readSseEventBatches,
  upstreamError as upstreamError3,
  toBodyReadError,
  withRawJson
} from "@modelmux/core";

// plugins/provider-anthropic/src/delta-literal.ts
var CANONICAL_STRING = String.raw`"[^"\\\u0000-\u001f]*(?:\\["\\bfnrt][^"\\\u0000-\u001f]*)*"`;
function decodeLiteral(literal) {
  return literal.length < 15 && literal.indexOf("\\") < 0 ? literal.slice(1, -1) : JSON.parse(literal);
}
var TEXT_DELTA = new RegExp(String.raw`^\{"type":"content_block_delta","index":(?:0|[1-9]\d*),"delta":\{"type":"text_delta","text":(${CANONICAL_STRING})\}\}$`);
var ARGUMENTS_DELTA = new RegExp(
  String.raw`^\{"type":"content_block_delta","index":(0|[1-9]\d*),"delta":\{"type":"input_json_delta","partial_json":(${CANONICAL_STRING})\}\}$`
);

// plugins/provider-anthropic/src/errors.ts
import {
  errorMapper,
  parseErrorBody as readErrorBody,
  readErrorPayload,
  redactSecrets as redact
} from "@modelmux/core";
var ERROR_TYPE_STATUS = Object.freeze({
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529
});
var CONTEXT_LENGTH_EXCEEDED = "context_length_exceeded";
var CONTEXT_LENGTH_MESSAGE = /prompt is too long|input length and `?max_tokens`? exceed context limit/i;
function readAnthropicError(payload) {
  const info = readErrorPayload(payload);
  if (info?.type !== "invalid_request_error" || !CONTEXT_LENGTH_MESSAGE.test(info.message)) return info;
  return { ...info, type: CONTEXT_LENGTH_EXCEEDED };
}
var streamStatus = (info) => info.type === CONTEXT_LENGTH_EXCEEDED ? 400 : info.type && ERROR_TYPE_STATUS[info.type] || 500;
var anthropicErrors = (provider, secrets) => errorMapper({ provider, secrets, code: "type", streamStatus, read: readAnthropicError });
function toStreamError(provider, payload, secret) {
  return anthropicErrors(provider, [secret]).fromEvent(payload);
}

// plugins/provider-anthropic/src/response.ts
import { parseUpstreamJson, upstreamError as upstreamError2 } from "@modelmux/core";
var isObject = (value) => typeof value === "object" && value !== null && !Array.isArray(value);
var toInt = (value) => typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.floor(value) : 0;
var STOP_REASONS = Object.freeze({
  end_turn: "stop",
  stop_sequence: "stop",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  tool_use: "tool_calls",
  refusal: "content_filter",
  // The server paused a long server-tool turn; the client may send the reply back to continue it.
  pause_turn: "stop"
});
function mapStopReason(reason) {
  if (typeof reason !== "string") return { finish_reason: "stop" };
  return { finish_reason: STOP_REASONS[reason] ?? "stop", native_finish_reason: reason };
}
function toUsage(usage) {
  const u = isObject(usage) ? usage : {};
  const cacheCreation = toInt(u.cache_creation_input_tokens);
  const cacheRead = toInt(u.cache_read_input_tokens);
  const prompt = toInt(u.input_tokens) + cacheCreation + cacheRead;
  const completion = toInt(u.output_tokens);
  const out = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cacheRead, cache_creation_tokens: cacheCreation }
  };
  const details = u.output_tokens_details;
  if (isObject(details) && typeof details.thinking_tokens === "number") out.completion_tokens_details = { reasoning_tokens: toInt(details.thinking_tokens) };
  return out;
}

// plugins/provider-anthropic/src/stream.ts
var isObject2 = (value) => typeof value === "object" && value !== null && !Array.isArray(value);
var USAGE_FIELDS = ["input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens_details"];
function createStreamTranslator(context) {
  let id = "";
  let model = context.model;
  const created = Math.floor(Date.now() / 1e3);
  const usage = {};
  const tools = /* @__PURE__ */ new Map();
  let roleSent = false;
  let finished = false;
  let done = false;
  const messageId = () => id ||= `msg_${crypto.randomUUID()}`;
  const chunk2 = (delta, finish) => {
    if (!roleSent) {
      delta = { role: "assistant", ...delta };
      roleSent = true;
    }
    return { id: messageId(), object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: null, ...finish }] };
  };
  const toolDelta = (blockIndex, args) => {
    const tool = tools.get(blockIndex);
    if (!tool || !args) return [];
    tool.sentArguments = true;
    return [chunk2({ tool_calls: [{ index: tool.index, function: { arguments: args } }] })];
  };
  const updateUsage = (raw) => {
    if (!isObject2(raw)) return;
    for (const field of USAGE_FIELDS) if (raw[field] != null) usage[field] = raw[field];
  };
  function push(event) {
    if (!isObject2(event) || done) return [];
    const index = typeof event.index === "number" ? event.index : -1;
    switch (event.type) {
      case "message_start": {
        const message = isObject2(event.message) ? event.message : {};
        if (typeof message.id === "string" && message.id) id = message.id;
        if (typeof message.model === "string" && message.model) model = message.model;
        head = "";
        updateUsage(message.usage);
        return roleSent ? [] : [chunk2({ content: "" })];
      }
      case "content_block_start": {
        const block = isObject2(event.content_block) ? event.content_block : {};
        if (block.type === "text") return typeof block.text === "string" && block.text ? [chunk2({ content: block.text })] : [];
        if (block.type !== "tool_use") return [];
        const tool = { index: tools.size, sentArguments: false };
        tools.set(index, tool);
        const name = typeof block.name === "string" ? block.name : "";
        const head2 = chunk2({ tool_calls: [{ index: tool.index, id: String(block.id ?? ""), type: "function", function: { name, arguments: "" } }] });
        const input = isObject2(block.input) && Object.keys(block.input).length > 0 ? JSON.stringify(block.input) : "";
        return [head2, ...toolDelta(index, input)];
      }
      case "content_block_delta": {
        const delta = isObject2(event.delta) ? event.delta : {};
        if (delta.type === "text_delta" && typeof delta.text === "string") return delta.text ? [chunk2({ content: delta.text })] : [];
        if (delta.type === "input_json_delta" && typeof delta.partial_json === "string") return toolDelta(index, delta.partial_json);
        return [];
      }
      case "content_block_stop": {
        const tool = tools.get(index);
        return tool && !tool.sentArguments ? toolDelta(index, "{}") : [];
      }
      case "message_delta": {
        updateUsage(event.usage);
        const delta = isObject2(event.delta) ? event.delta : {};
        if (typeof delta.stop_reason !== "string" || finished) return [];
        finished = true;
        return [chunk2({}, mapStopReason(delta.stop_reason))];
      }
      case "message_stop": {
        done = true;
        const last = finished ? [] : [chunk2({}, mapStopReason(void 0))];
        return [...last, usageChunk()];
      }
      case "error":
        throw toStreamError(context.provider, event, context.secret);
      default:
        return [];
    }
  }
  const usageChunk = () => ({ id: messageId(), object: "chat.completion.chunk", created, model, choices: [], usage: toUsage(usage) });
  function end() {
    if (done) return [];
    if (!finished) throw upstreamError3(`${context.provider}: the stream ended before message_stop.`);
    done = true;
    return [usageChunk()];
  }
  let head = "";
  const headOf = () => head ||= JSON.stringify({ id: messageId(), object: "chat.completion.chunk", created, model }).slice(0, -1);
  const rawChunk = (delta, text) => withRawJson({ id: messageId(), object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: null }] }, text);
  function textChunk(literal) {
    if (done || literal === '""') return null;
    if (!roleSent) return void 0;
    const text = `${headOf()},"choices":[{"index":0,"delta":{"content":${literal}},"finish_reason":null}]}`;
    return rawChunk({ content: decodeLiteral(literal) }, text);
  }
  function argumentsChunk(blockIndex, literal) {
    if (done) return null;
    if (!roleSent) return void 0;
    const tool = tools.get(blockIndex);
    if (!tool || literal === '""') return null;
    tool.sentArguments = true;
    const text = `${headOf()},"choices":[{"index":0,"delta":{"tool_calls":[{"index":${tool.index},"function":{"arguments":${literal}}}]},"finish_reason":null}]}`;
    return rawChunk({ tool_calls: [{ index: tool.index, function: { arguments: decodeLiteral(literal) } }] }, text);
  }
  return {
    push,
    textChunk,
    argumentsChunk,
    end,
    get done() {
      return done;
    }
  };
}
function deltaChunk(data, translator) {
  const text = TEXT_DELTA.exec(data);
  if (text !== null) return translator.textChunk(text[1]);
  const args = ARGUMENTS_DELTA.exec(data);
  return args === null ? void 0 : translator.argumentsChunk(Number(args[1]), args[2]);
}
function parseEvent({ event, data }, provider) {
  if (!data.trim()) return void 0;
  let payload;
  try {
    payload = JSON.parse(data);
  } catch (error) {
    throw upstreamError3(`${provider}: a stream event is not valid JSON.`, error);
  }
  if (isObject2(payload) && typeof payload.type !== "string" && event) payload.type = event;
  return payload;
}
function translateRead(events, translator, items, provider) {
  try {
    for (let i = 0; i < events.length && !translator.done; i++) {
      const event = events[i];
      const fast = deltaChunk(event.data, translator);
      if (fast !== void 0) {
        if (fast !== null) items.push(fast);
        continue;
      }
      const chunks = translator.push(parseEvent(event, provider));
      for (let j = 0; j < chunks.length; j++) items.push(chunks[j]);
    }
  } catch (error) {
    return error;
  }
  return void 0;
}
async function* readMessageStreamBatches(body2, options) {
  const translator = createStreamTranslator(options);
  try {
    for await (const events of readSseEventBatches(body2)) {
      const items = [];
      const failure = translateRead(events, translator, items, options.provider);
      if (items.length > 0) yield items;
      if (failure !== void 0) throw failure;
      if (translator.done) return;
    }
  } catch (error) {
    throw toBodyReadError(error, options.provider, options.timeoutMs);
  }
  const last = translator.end();
  if (last.length > 0) yield last;
}

// bench/proxy/replies.ts
var CHUNKS = 20;
var CREATED = 17638e5;
var TOKENS = Array.from({ length: CHUNKS }, (_, i) => i === 0 ? "Routers" : ` token${i}`);
var TEXT = TOKENS.join("");
var sse = (data, event) => `${event ? `event: ${event}
` : ""}data: ${JSON.stringify(data)}

`;
var CHAT_MODEL = "gpt-4o-mini-2024-07-18";
var CHAT_USAGE = {
  prompt_tokens: 24,
  completion_tokens: CHUNKS,
  total_tokens: 24 + CHUNKS,
  prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 }
};
var chatJson = {
  id: "chatcmpl-bench",
  object: "chat.completion",
  created: CREATED,
  model: CHAT_MODEL,
  choices: [{ index: 0, message: { role: "assistant", content: TEXT, refusal: null, annotations: [] }, logprobs: null, finish_reason: "stop" }],
  usage: CHAT_USAGE,
  service_tier: "default",
  system_fingerprint: "fp_bench"
};
var chunk = (delta, finish = null) => ({
  id: "chatcmpl-bench",
  object: "chat.completion.chunk",
  created: CREATED,
  model: CHAT_MODEL,
  service_tier: "default",
  system_fingerprint: "fp_bench",
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  usage: null
});
var chatHead = sse(chunk({ role: "assistant", content: "", refusal: null }));
var chatTail = TOKENS.map((token) => sse(chunk({ content: token }))).join("") + sse(chunk({}, "stop")) + sse({ ...chunk({}), choices: [], usage: CHAT_USAGE }) + "data: [DONE]\n\n";
var CLAUDE_MODEL = "claude-sonnet-4-5-20250929";
var startUsage = { input_tokens: 24, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 };
var messageJson = {
  id: "msg_bench",
  type: "message",
  role: "assistant",
  model: CLAUDE_MODEL,
  content: [{ type: "text", text: TEXT }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { ...startUsage, output_tokens: CHUNKS }
};
var messageStream = sse({ type: "message_start", message: { ...messageJson, content: [], stop_reason: null, usage: startUsage } }, "message_start") + sse({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }, "content_block_start") + sse({ type: "ping" }, "ping") + TOKENS.map((text) => sse({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }, "content_block_delta")).join("") + sse({ type: "content_block_stop", index: 0 }, "content_block_stop") + sse({ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: CHUNKS } }, "message_delta") + sse({ type: "message_stop" }, "message_stop");
var outputText = { type: "output_text", annotations: [], logprobs: [], text: TEXT };
var messageItem = { id: "msg_bench", type: "message", status: "completed", content: [outputText], role: "assistant" };
var responseJson = {
  id: "resp_bench",
  object: "response",
  created_at: CREATED,
  status: "completed",
  background: false,
  error: null,
  incomplete_details: null,
  instructions: null,
  max_output_tokens: null,
  model: CHAT_MODEL,
  output: [messageItem],
  parallel_tool_calls: true,
  previous_response_id: null,
  reasoning: { effort: null, summary: null },
  service_tier: "default",
  store: true,
  temperature: 1,
  text: { format: { type: "text" }, verbosity: "medium" },
  tool_choice: "auto",
  tools: [],
  top_p: 1,
  truncation: "disabled",
  usage: { input_tokens: 24, input_tokens_details: { cached_tokens: 0 }, output_tokens: CHUNKS, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 24 + CHUNKS },
  user: null,
  metadata: {}
};
function responseEvents() {
  let sequence = 0;
  const event = (type, fields) => sse({ type, sequence_number: sequence++, ...fields }, type);
  const inProgress = { ...responseJson, status: "in_progress", output: [], usage: null };
  const at = { item_id: "msg_bench", output_index: 0, content_index: 0 };
  return event("response.created", { response: inProgress }) + event("response.in_progress", { response: inProgress }) + event("response.output_item.added", { output_index: 0, item: { ...messageItem, status: "in_progress", content: [] } }) + event("response.content_part.added", { ...at, part: { ...outputText, text: "" } }) + TOKENS.map((delta) => event("response.output_text.delta", { ...at, delta, logprobs: [], obfuscation: "x" })).join("") + event("response.output_text.done", { ...at, text: TEXT, logprobs: [] }) + event("response.content_part.done", { ...at, part: outputText }) + event("response.output_item.done", { output_index: 0, item: messageItem }) + event("response.completed", { response: responseJson });
}
var REPLIES = {
  chatJson: Buffer.from(JSON.stringify(chatJson)),
  chatStream: Buffer.from(chatHead + chatTail),
  chatHead: Buffer.from(chatHead),
  chatTail: Buffer.from(chatTail),
  messageJson: Buffer.from(JSON.stringify(messageJson)),
  messageStream: Buffer.from(messageStream),
  responseJson: Buffer.from(JSON.stringify(responseJson)),
  responseStream: Buffer.from(responseEvents())
};
var EXPECT = { text: TEXT, lastToken: TOKENS.at(-1) };

// bench/micro/anthropic-stream-frames.ts
var STREAMS = Number(process.argv[2] ?? 5e3);
var ROUNDS = Number(process.argv[3] ?? 15);
var READ_OPTIONS = { provider: "anthropic", model: "claude-sonnet-4-5", timeoutMs: 1e4 };
function body() {
  const reads = [REPLIES.messageStream];
  return {
    async *[Symbol.asyncIterator]() {
      yield* reads;
    },
    destroyed: false,
    destroy() {
    },
    text: async () => "",
    json: async () => null
  };
}
async function oneStream(mode) {
  const assembler = mode === "store: true" ? createCompletionAssembler("anthropic", 1 << 24) : void 0;
  const options = {
    provider: "anthropic",
    includeUsage: false,
    keepServiceTier: false,
    clientGone: () => false,
    ...assembler && { collect: assembler.add, beforeDone: async () => void assembler.completion() },
    ...mode === "transcript" && { collect: new Transcript().add }
  };
  const items = readMessageStreamBatches(body(), READ_OPTIONS);
  let bytes = 0;
  let last = "";
  for await (const frame of await openChatStreamFrames(items, options)) {
    bytes += frame.length;
    last = frame;
  }
  if (last !== "data: [DONE]\n\n") throw new Error(`the stream did not end with [DONE]: ${last}`);
  return bytes;
}
async function round(mode, streams) {
  const start = process.cpuUsage();
  for (let i = 0; i < streams; i++) await oneStream(mode);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / streams;
}
var median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
var check = await (async () => {
  const frames = [];
  for await (const frame of await openChatStreamFrames(readMessageStreamBatches(body(), READ_OPTIONS), { provider: "anthropic", includeUsage: false, keepServiceTier: false, clientGone: () => false })) frames.push(frame);
  return frames.join("");
})();
if (!check.includes(JSON.stringify(EXPECT.lastToken))) throw new Error("the frames lack the last token");
var MODES = ["plain", "store: true", "transcript"];
for (const mode of MODES) await round(mode, Math.min(STREAMS, 5e3));
for (const mode of MODES) {
  const results = [];
  for (let r = 0; r < ROUNDS; r++) results.push(await round(mode, STREAMS));
  const label = mode.padEnd(11);
  console.log(`${label} \xB5s CPU per stream: median ${median(results).toFixed(1)}, least ${Math.min(...results).toFixed(1)} (${ROUNDS} rounds of ${STREAMS})`);
}
