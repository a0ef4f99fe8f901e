// core/src/operations/pricing.ts
var PER_TOKEN = 1 / 1e6;
function count(value) {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}
function costAt(price, usage) {
  const input = count(usage.prompt_tokens ?? usage.input_tokens);
  const cached = Math.min(input, count(usage.prompt_tokens_details?.cached_tokens ?? usage.input_tokens_details?.cached_tokens));
  const output = count(usage.completion_tokens ?? usage.output_tokens);
  return ((input - cached) * price.input + cached * (price.cached_input ?? price.input) + output * price.output) * PER_TOKEN;
}
function createPricing(prices) {
  const table = new Map(Object.entries(prices ?? {}));
  return {
    priceOf: (model) => table.get(model),
    costOf(model, usage) {
      if (model === void 0 || !usage || table.size === 0) return void 0;
      const price = table.get(model);
      return price === void 0 ? void 0 : costAt(price, usage);
    }
  };
}

// core/src/routing/circuit-breaker.ts
function stateAt(circuit, now) {
  if (circuit.openUntil === 0) return "closed";
  return now < circuit.openUntil ? "open" : "half-open";
}
var CircuitBreakers = class {
  /** @param now the clock, in ms (monotonic: `performance.now` by default). */
  constructor(now = () => performance.now()) {
    this.now = now;
  }
  now;
  circuits = /* @__PURE__ */ new Map();
  /** The state of a target's circuit now. */
  state(target2) {
    const circuit = this.circuits.get(target2.entry.name);
    return circuit === void 0 || circuit.openUntil === 0 ? "closed" : stateAt(circuit, this.now());
  }
  /**
   * The state now of each target that has failed lately, by its `provider/model`; any other target's
   * circuit is closed. Read-only, for the metrics' circuit gauge at scrape time.
   */
  states() {
    const now = this.now();
    const states = /* @__PURE__ */ new Map();
    for (const [name, circuit] of this.circuits) states.set(name, stateAt(circuit, now));
    return states;
  }
  /**
   * What the circuit of the target named `name` (`provider/model`) is now, read only, for the
   * status page: its state, the consecutive failures counted while closed, and the ms until an
   * open circuit admits its probe (0 once it does; undefined while closed).
   */
  inspect(name) {
    const circuit = this.circuits.get(name);
    if (circuit === void 0) return { state: "closed", failures: 0 };
    if (circuit.openUntil === 0) return { state: "closed", failures: circuit.failures };
    const left = circuit.openUntil - this.now();
    return left > 0 ? { state: "open", failures: circuit.failures, probeInMs: left } : { state: "half-open", failures: circuit.failures, probeInMs: 0 };
  }
  /**
   * May an attempt of `target` start now? Yes when its circuit is closed; when it is open and its
   * cooldown has ended, yes for one probe (until that probe's `success`, `failure` or `release`).
   */
  admit(target2) {
    if (this.circuits.size === 0) return true;
    const circuit = this.circuits.get(target2.entry.name);
    if (circuit === void 0 || circuit.openUntil === 0) return true;
    if (circuit.probing || this.now() < circuit.openUntil) return false;
    circuit.probing = true;
    return true;
  }
  /** Admits `target` whatever its state: every circuit was open and its cooldown ends first (`soonest`). */
  force(target2) {
    const circuit = this.circuits.get(target2.entry.name);
    if (circuit !== void 0 && circuit.openUntil !== 0) circuit.probing = true;
  }
  /** The target answered (even with an error that is not its failure, a 400): its circuit closes. */
  success(target2) {
    if (this.circuits.size !== 0) this.circuits.delete(target2.entry.name);
  }
  /** A retryable failure or a timeout of `target`. */
  failure(target2) {
    const { failures, cooldownMs } = target2.settings.circuitBreaker;
    if (failures <= 0) return;
    const name = target2.entry.name;
    let circuit = this.circuits.get(name);
    if (circuit === void 0) this.circuits.set(name, circuit = { failures: 0, openUntil: 0, probing: false });
    if (circuit.openUntil !== 0) {
      circuit.probing = false;
      circuit.openUntil = this.openUntil(cooldownMs);
      return;
    }
    circuit.failures++;
    if (circuit.failures >= failures) circuit.openUntil = this.openUntil(cooldownMs);
  }
  /** An admitted attempt ended saying nothing of the target (the client left, a bug of ours): its probe slot is free again. */
  release(target2) {
    const circuit = this.circuits.get(target2.entry.name);
    if (circuit !== void 0) circuit.probing = false;
  }
  /**
   * Of `targets`, the one whose circuit's cooldown ends first (a closed one before any), for when
   * every circuit is open; undefined for none.
   */
  soonest(targets2) {
    let best;
    let bestUntil = Number.POSITIVE_INFINITY;
    for (const target2 of targets2) {
      const until = this.circuits.get(target2.entry.name)?.openUntil ?? 0;
      if (best === void 0 || until < bestUntil) {
        best = target2;
        bestUntil = until;
      }
    }
    return best;
  }
  /** The clock's time a circuit opened now admits its probe; never 0, which means closed. */
  openUntil(cooldownMs) {
    return Math.max(this.now() + Math.max(0, cooldownMs), Number.MIN_VALUE);
  }
};

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
function rateLimited(message, retryAfterSeconds, headers = {}) {
  return new ModelmuxError(message, {
    status: 429,
    type: "rate_limit_error",
    code: "rate_limit_exceeded",
    headers: { ...headers, "retry-after": String(Math.max(1, Math.ceil(retryAfterSeconds))) }
  });
}
function upstreamError(message, cause) {
  return new ModelmuxError(message, { status: 502, type: "api_error", code: "upstream_error", cause });
}
function upstreamTimeout(provider, timeoutMs) {
  return new ModelmuxError(`Provider '${provider}' did not answer within its timeout of ${timeoutMs / 1e3}s.`, {
    status: 504,
    type: "api_error",
    code: "upstream_timeout"
  });
}
function upstreamIdle(provider, idleMs) {
  return new ModelmuxError(`Provider '${provider}' sent nothing for ${idleMs / 1e3}s mid-reply (routing.timeouts.idle).`, {
    status: 504,
    type: "api_error",
    code: "upstream_timeout"
  });
}
function internalError(cause) {
  return new ModelmuxError("Internal error in modelmux. This is a bug; the request id identifies it in the router's log.", {
    status: 500,
    type: "api_error",
    code: "internal_error",
    cause
  });
}

// core/src/plugins/rate-limit-contract.ts
var COST_UNITS_PER_USD = 1e9;
function costUnits(usd) {
  if (usd === void 0 || !(usd > 0)) return 0;
  const units = usd * COST_UNITS_PER_USD;
  const whole = Math.round(units);
  return Math.max(1, Math.abs(units - whole) <= whole * 45e-17 ? whole : Math.ceil(units));
}

// core/src/rate-limit/cost-reservation.ts
var DEFAULT_RESERVED_OUTPUT_TOKENS = 4096;
var BODY_BYTES_PER_PROMPT_TOKEN = 4;
function costReservation(price, reserve, bodyBytes) {
  const promptTokens = Math.ceil(Math.max(0, bodyBytes) / BODY_BYTES_PER_PROMPT_TOKEN);
  const outputTokens = reserve.tokens > 0 ? reserve.tokens : DEFAULT_RESERVED_OUTPUT_TOKENS;
  return { usd: (promptTokens * price.input + outputTokens * price.output) / 1e6, promptTokens, outputTokens };
}

// core/src/rate-limit/headers.ts
function formatReset(ms) {
  const total = Math.max(0, Math.ceil(ms));
  if (total < 1e3) return total === 0 ? "0s" : `${total}ms`;
  const hours = Math.floor(total / 36e5);
  const minutes = Math.floor(total % 36e5 / 6e4);
  const seconds2 = total % 6e4 / 1e3;
  const s = `${Number(seconds2.toFixed(3))}s`;
  if (hours > 0) return `${hours}h${minutes}m${s}`;
  if (minutes > 0) return `${minutes}m${s}`;
  return s;
}
function tightest(states, remaining, reset) {
  let best = -1;
  for (let i = 0; i < states.length; i++) {
    const left = remaining(states[i]);
    if (left === void 0) continue;
    const bestLeft = best < 0 ? void 0 : remaining(states[best]);
    if (bestLeft === void 0 || left < bestLeft || left === bestLeft && reset(states[i]) > reset(states[best])) best = i;
  }
  return best;
}
function usdHeader(usd) {
  return Math.max(0, usd).toFixed(9).replace(/\.?0+$/, "");
}
function rateLimitHeaders(rules, states) {
  const headers = {};
  if (states.length === 0) return headers;
  const r = tightest(states, (s) => s.remainingRequests, (s) => s.resetRequestsMs ?? 0);
  if (r >= 0 && rules[r].requests !== void 0) {
    headers["x-ratelimit-limit-requests"] = String(rules[r].requests);
    headers["x-ratelimit-remaining-requests"] = String(Math.max(0, states[r].remainingRequests));
    headers["x-ratelimit-reset-requests"] = formatReset(states[r].resetRequestsMs ?? 0);
  }
  const t = tightest(states, (s) => s.remainingTokens, (s) => s.resetTokensMs ?? 0);
  if (t >= 0 && rules[t].tokens !== void 0) {
    headers["x-ratelimit-limit-tokens"] = String(rules[t].tokens);
    headers["x-ratelimit-remaining-tokens"] = String(Math.max(0, states[t].remainingTokens));
    headers["x-ratelimit-reset-tokens"] = formatReset(states[t].resetTokensMs ?? 0);
  }
  const c = tightest(states, (s) => s.remainingCost, (s) => s.resetCostMs ?? 0);
  if (c >= 0 && rules[c].cost !== void 0) {
    headers["x-ratelimit-limit-cost"] = usdHeader(rules[c].cost);
    headers["x-ratelimit-remaining-cost"] = usdHeader(states[c].remainingCost);
    headers["x-ratelimit-reset-cost"] = formatReset(states[c].resetCostMs ?? 0);
  }
  return headers;
}

// core/src/rate-limit/policy.ts
function limitOf(overrides, name, fallback) {
  const override = overrides.get(name);
  return override === void 0 ? fallback : override ?? void 0;
}
function rule(scope, name, limit) {
  const scoped = { key: `${scope}:${name}`, scope, name, windowMs: limit.windowMs };
  if (limit.requests !== void 0) scoped.requests = limit.requests;
  if (limit.tokens !== void 0) scoped.tokens = limit.tokens;
  if (limit.cost !== void 0) scoped.cost = limit.cost;
  return scoped;
}
function rulesFor(policy, subject) {
  const rules = [];
  const app = limitOf(policy.apps, subject.app, policy.app);
  if (app) rules.push(rule("app", subject.app, app));
  const developer = limitOf(policy.developers, subject.developer, policy.developer);
  if (developer) rules.push(rule("developer", subject.developer, developer));
  const provider = policy.providers.get(subject.provider);
  if (provider) rules.push(rule("provider", subject.provider, provider));
  return rules;
}

// core/src/rate-limit/refusal.ts
var UNITS = [
  ["d", 864e5],
  ["h", 36e5],
  ["m", 6e4],
  ["s", 1e3]
];
function formatDuration(ms) {
  const i = UNITS.findIndex(([, size]) => ms >= size);
  if (i < 0 || i === UNITS.length - 1) return `${Math.max(1, Math.ceil(ms / 1e3))}s`;
  const [big, bigSize] = UNITS[i];
  const [small, smallSize] = UNITS[i + 1];
  const total = Math.ceil(ms / smallSize);
  const per = bigSize / smallSize;
  const high = Math.floor(total / per);
  const low = total % per;
  return low === 0 ? `${high}${big}` : `${high}${big} ${low}${small}`;
}
function formatUsd(usd) {
  if (usd <= 0) return "$0";
  if (Number.isInteger(usd)) return `$${usd}`;
  if (usd >= 1) return `$${usd.toFixed(2)}`;
  const text = usd.toFixed(Math.min(9, Math.max(2, 1 - Math.floor(Math.log10(usd)))));
  return `$${text.replace(/(\.\d\d\d*?)0+$/, "$1")}`;
}
function seconds(ms) {
  return formatReset(Math.max(ms, 1e3));
}
function describeLimit(rule2, what) {
  const amount = what === "requests" ? rule2.requests : rule2.tokens;
  return `${rule2.scope} '${rule2.name}': ${amount} ${what} per ${formatReset(rule2.windowMs)}`;
}
function describeBudget(rule2) {
  return `${rule2.scope} '${rule2.name}' budget of ${formatUsd(rule2.cost)} per ${formatDuration(rule2.windowMs)}`;
}
function exhausted(rule2, state, reservedCost) {
  if (rule2.requests !== void 0 && state.remainingRequests <= 0) return "requests";
  const remaining = costUnits(state.remainingCost);
  if (rule2.cost !== void 0 && (remaining === 0 || costUnits(reservedCost) > remaining)) return "cost";
  return rule2.tokens !== void 0 ? "tokens" : "requests";
}
function budgetMessage(rule2, state, estimate, retryAfterMs) {
  const resets = `resets in ${formatDuration(Math.max(retryAfterMs, 1e3))}`;
  if (costUnits(state.remainingCost) === 0) return `The ${describeBudget(rule2)} is spent: ${formatUsd(state.countedCost ?? rule2.cost)} used; ${resets}.`;
  const could = estimate ? formatUsd(estimate.usd) : "more";
  return `The ${describeBudget(rule2)} has ${formatUsd(state.remainingCost)} left, less than this request could cost (${could}); ${resets}, or ask for fewer output tokens.`;
}
var providerRefusals = /* @__PURE__ */ new WeakSet();
function isProviderRefusal(error) {
  return error instanceof ModelmuxError && providerRefusals.has(error);
}
function refusal(rules, decision, headers, estimate) {
  const retry = { ...headers, "retry-after-ms": String(Math.max(1, Math.ceil(decision.retryAfterMs))) };
  if (decision.unavailable) {
    return rateLimited(
      `The rate limiter's store is unreachable and it is set to refuse requests until it is back (fail-closed). Try again in ${seconds(decision.retryAfterMs)}.`,
      decision.retryAfterMs / 1e3,
      retry
    );
  }
  let worst = 0;
  decision.states.forEach((state2, i) => {
    if (state2.retryAfterMs > decision.states[worst].retryAfterMs) worst = i;
  });
  const rule2 = rules[worst];
  const state = decision.states[worst];
  const what = exhausted(rule2, state, estimate?.usd ?? 0);
  const message = what === "cost" ? budgetMessage(rule2, state, estimate, decision.retryAfterMs) : `Rate limit reached for ${describeLimit(rule2, what)}. Try again in ${seconds(decision.retryAfterMs)}.`;
  const error = rateLimited(message, decision.retryAfterMs / 1e3, retry);
  if (rule2.scope === "provider") providerRefusals.add(error);
  return error;
}
function tooLarge(rule2, reserve) {
  const field = reserve.param ?? "the token reservation";
  return new ModelmuxError(`Request too large for ${describeLimit(rule2, "tokens")}: ${field} is ${reserve.tokens}. Lower ${field}.`, {
    status: 429,
    type: "rate_limit_error",
    code: "rate_limit_exceeded",
    param: reserve.param ?? null,
    headers: { "retry-after": String(Math.max(1, Math.ceil(rule2.windowMs / 1e3))) }
  });
}
function tooCostly(rule2, reserve, estimate, target2) {
  const output = reserve.param ? `${reserve.param} ${reserve.tokens}` : `${estimate.outputTokens} output tokens reserved when no max_completion_tokens, max_tokens or max_output_tokens is set`;
  const error = new ModelmuxError(
    `Request too large for the ${describeBudget(rule2)}: at ${target2.model}'s price it could cost up to ${formatUsd(estimate.usd)} (${output}, about ${estimate.promptTokens} prompt tokens). Ask for fewer output tokens.`,
    {
      status: 429,
      type: "rate_limit_error",
      code: "rate_limit_exceeded",
      param: reserve.param ?? null,
      headers: { "retry-after": String(Math.max(1, Math.ceil(rule2.windowMs / 1e3))) }
    }
  );
  if (rule2.scope === "provider") providerRefusals.add(error);
  return error;
}

// core/src/rate-limit/acquire.ts
function totalTokens(usage) {
  if (!usage) return 0;
  const total = usage.total_tokens ?? (usage.prompt_tokens ?? usage.input_tokens ?? 0) + (usage.completion_tokens ?? usage.output_tokens ?? 0);
  return Number.isFinite(total) && total > 0 ? Math.floor(total) : 0;
}
var NO_LIMIT = Object.freeze({ headers: Object.freeze({}), settle() {
} });
function refusalScope(rules, decision) {
  if (decision.unavailable) return "unavailable";
  let worst = 0;
  decision.states.forEach((state, i) => {
    if (state.retryAfterMs > decision.states[worst].retryAfterMs) worst = i;
  });
  return rules[worst]?.scope ?? "app";
}
function acquireRateLimit(x, input) {
  const limits = x.rateLimits;
  return limits ? acquire(limits, x, input) : NO_LIMIT;
}
async function acquire(limits, x, input) {
  const principal = x.principal;
  let rules = rulesFor(limits.policy, { app: principal?.app ?? "default", developer: principal?.developer ?? "default", provider: input.provider });
  if (input.providerOnly) rules = rules.filter((rule2) => rule2.scope === "provider");
  if (rules.length === 0) return NO_LIMIT;
  const reserve = input.reserve ?? { tokens: 0 };
  const budgets = rules.some((rule2) => rule2.cost !== void 0);
  const estimate = budgets && input.price ? costReservation(input.price.price, reserve, x.bodyBytes ?? 0) : void 0;
  for (const rule2 of rules) {
    if (rule2.tokens !== void 0 && reserve.tokens > rule2.tokens) {
      limits.onRefusal?.(rule2.scope);
      throw tooLarge(rule2, reserve);
    }
    if (estimate && rule2.cost !== void 0 && costUnits(estimate.usd) > costUnits(rule2.cost)) {
      limits.onRefusal?.(rule2.scope);
      throw tooCostly(rule2, reserve, estimate, input.price);
    }
  }
  const id = limits.nextId();
  const reservedTokens = rules.some((rule2) => rule2.tokens !== void 0) ? reserve.tokens : 0;
  const reservedCost = estimate?.usd ?? 0;
  const decision = await limits.limiter.acquire({ id, rules, reservedTokens, reservedCost });
  limits.latest.record(rules, decision.states);
  const headers = rateLimitHeaders(rules, decision.states);
  if (!decision.allowed) {
    limits.onRefusal?.(refusalScope(rules, decision));
    throw refusal(rules, decision, headers, estimate);
  }
  if (!input.providerOnly) x.rateLimitHeaders = headers;
  const counts = !decision.unavailable && (budgets || rules.some((rule2) => rule2.tokens !== void 0));
  let settled = false;
  const send = (counted, usedTokens, usedCost) => {
    limits.limiter.settle({ id, rules: counted, reservedTokens, reservedCost, usedTokens, usedCost }).catch((error) => {
      limits.logger.warn("settling a rate-limit reservation failed", { request_id: x.requestId }, error);
    });
  };
  return {
    headers,
    settle(usage, answeredBy) {
      if (settled) return;
      settled = true;
      if (!counts) return;
      const price = answeredBy ? answeredBy.price : input.price;
      const usedTokens = totalTokens(usage);
      const usedCost = budgets && price && usage ? costAt(price.price, usage) : 0;
      if (!answeredBy) return send(rules, usedTokens, usedCost);
      const own = rules.filter((rule2) => rule2.scope !== "provider");
      if (own.length > 0) send(own, usedTokens, usedCost);
      if (own.length < rules.length) send(rules.filter((rule2) => rule2.scope === "provider"), 0, 0);
    }
  };
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
var UPSTREAM_BODY_TOO_LARGE = "MODELMUX_UPSTREAM_BODY_TOO_LARGE";
var UpstreamBodyTooLarge = class extends Error {
  constructor(limit, part) {
    super(`The upstream sent ${part === "event" ? "an event" : "a reply"} larger than ${limit} bytes (server.upstream_body_limit).`);
    this.limit = limit;
    this.part = part;
    this.name = "UpstreamBodyTooLarge";
  }
  limit;
  part;
  code = UPSTREAM_BODY_TOO_LARGE;
};

// core/src/utils/deliver-soon.ts
var toDeliver = [];
function deliverSoon(target2) {
  if (toDeliver.push(target2) === 1) queueMicrotask(deliverAll);
}
function deliverAll() {
  for (let i = 0; i < toDeliver.length; i++) toDeliver[i].deliver();
  toDeliver.length = 0;
}

// core/src/utils/promise-on.ts
var capturing;
function capture(resolve, reject) {
  capturing.resolve = resolve;
  capturing.reject = reject;
}
function promiseOn(holder) {
  capturing = holder;
  const promise = new Promise(capture);
  capturing = void 0;
  return promise;
}

// core/src/upstream/reply-body.ts
var HIGH_WATER_MARK = 64 * 1024;
var OPEN = 0;
var COMPLETE = 1;
var FAILED = 2;
var RELEASED = 3;
var DONE = Object.freeze({ done: true, value: void 0 });
var DONE_PROMISE = Promise.resolve(DONE);
function abortError() {
  return new DOMException("This operation was aborted", "AbortError");
}
function parseJson(text) {
  return JSON.parse(text);
}
function joined(chunks) {
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
}
var StreamedBody = class {
  constructor(source, bufferLimit) {
    this.source = source;
    this.bufferLimit = bufferLimit;
  }
  source;
  bufferLimit;
  state = OPEN;
  queue = [];
  queued = 0;
  /** `push` returned false: the source waits for `pull`. */
  paused = false;
  /** A `text()` or `bytes()` is waiting for the end: keep everything, never pause. */
  collecting = false;
  /** What the waiting `whole` gets: text (`text()`) or bytes (`bytes()`). */
  wholeAsText = true;
  /** The reader ends the whole-wait bound itself (`keepDeadline`). */
  deadlineKept = false;
  /** A chunk has been handed to an iterating reader. */
  started = false;
  /** Queued by `deliverSoon`. */
  delivering = false;
  error;
  /** A read waiting for the next chunk. */
  read = { resolve: void 0, reject: void 0 };
  /** A `text()` or `bytes()` waiting for the end; made only then. */
  whole;
  // --- the producer side (undici's callbacks) ---
  /** Adds a chunk; false asks the source to pause until `pull`. */
  push(chunk) {
    if (this.state !== OPEN) return true;
    this.queue.push(chunk);
    this.queued += chunk.length;
    if (this.collecting && this.queued > this.bufferLimit) {
      this.overflow();
      return true;
    }
    if (this.read.resolve !== void 0 && !this.delivering) {
      this.delivering = true;
      deliverSoon(this);
    }
    if (this.collecting || this.queued < HIGH_WATER_MARK) return true;
    this.paused = true;
    return false;
  }
  /** Every chunk has been pushed. */
  end() {
    if (this.state !== OPEN) return;
    this.state = COMPLETE;
    const read = this.queue.length === 0 ? this.read.resolve : void 0;
    const whole = this.whole?.resolve;
    if (read === void 0 && whole === void 0) return;
    this.state = RELEASED;
    this.settleRead();
    this.whole = void 0;
    read?.(DONE);
    whole?.(this.wholeAsText ? this.take().toString("utf8") : this.take());
  }
  /** The reply broke off: a waiting read or `text()` rejects with `error`, or the next one will. */
  fail(error) {
    if (this.state !== OPEN) return;
    this.state = FAILED;
    this.error = error;
    this.queue.length = 0;
    this.queued = 0;
    this.rejectWaiting(error);
  }
  /** Answers a waiting read with what is queued (see `deliverSoon`). */
  deliver() {
    this.delivering = false;
    const resolve = this.read.resolve;
    if (resolve === void 0 || this.queue.length === 0) return;
    this.settleRead();
    const chunk = this.take();
    if (this.paused) this.resume();
    if (!this.started) this.start();
    resolve({ done: false, value: chunk });
  }
  // --- the consumer side ---
  get destroyed() {
    return this.state === RELEASED || this.state === FAILED || this.state === COMPLETE && this.queue.length === 0;
  }
  [Symbol.asyncIterator]() {
    return this;
  }
  next() {
    if (this.read.resolve !== void 0 || this.whole !== void 0) return Promise.reject(new Error("The body is already being read."));
    if (this.queue.length > 0) {
      const chunk = this.take();
      if (this.paused) this.resume();
      if (!this.started) this.start();
      return Promise.resolve({ done: false, value: chunk });
    }
    switch (this.state) {
      case OPEN:
        return promiseOn(this.read);
      case FAILED:
        this.state = RELEASED;
        return Promise.reject(this.error);
      default:
        this.state = RELEASED;
        return DONE_PROMISE;
    }
  }
  /** Ending the iteration early (`break`, a throw in the loop) destroys the body. */
  return() {
    this.destroy();
    return DONE_PROMISE;
  }
  /** Rejects with an `UpstreamBodyTooLarge`, at once, for a body that is or says it is over `bufferLimit`. */
  text() {
    return this.collect(true);
  }
  /** `text()`'s bytes, undecoded: for a reply passed on as it came. */
  bytes() {
    return this.collect(false);
  }
  collect(asText) {
    switch (this.state) {
      case COMPLETE: {
        this.state = RELEASED;
        if (this.queued > this.bufferLimit) return Promise.reject(this.tooLarge());
        const bytes = this.take();
        return Promise.resolve(asText ? bytes.toString("utf8") : bytes);
      }
      case FAILED:
        this.state = RELEASED;
        return Promise.reject(this.error);
      case RELEASED:
        return Promise.reject(new TypeError("The body was already read or destroyed."));
    }
    if (this.whole !== void 0 || this.read.resolve !== void 0) return Promise.reject(new Error("The body is already being read."));
    if (this.queued > this.bufferLimit || (this.source.declaredLength() ?? 0) > this.bufferLimit) {
      const error = this.tooLarge();
      this.destroy(error);
      return Promise.reject(error);
    }
    this.collecting = true;
    this.wholeAsText = asText;
    this.whole = { resolve: void 0, reject: void 0 };
    const whole = promiseOn(this.whole);
    if (this.paused) this.resume();
    return whole;
  }
  json() {
    return this.text().then(parseJson);
  }
  keepDeadline() {
    this.deadlineKept = true;
  }
  markStreaming() {
    if (this.state === OPEN) this.source.streaming();
  }
  destroy(error) {
    const state = this.state;
    if (state === RELEASED) return;
    this.state = RELEASED;
    this.queue.length = 0;
    this.queued = 0;
    if (state !== OPEN) return;
    const reason = error ?? abortError();
    this.rejectWaiting(reason);
    this.source.cancel(reason);
  }
  tooLarge() {
    this.queue.length = 0;
    this.queued = 0;
    return new UpstreamBodyTooLarge(this.bufferLimit, "reply");
  }
  /** A `text()` outgrew the limit: it fails, what was queued is dropped, and the request is cancelled. */
  overflow() {
    const error = this.tooLarge();
    this.state = FAILED;
    this.error = error;
    this.rejectWaiting(error);
    this.source.cancel(error);
  }
  /** The first chunk went to an iterating reader: unless it keeps the deadline, the whole-wait bound ends. */
  start() {
    this.started = true;
    if (!this.deadlineKept && this.state === OPEN) this.source.streaming();
  }
  /** Every queued chunk, as one buffer; the queue array is kept for reuse. */
  take() {
    const chunk = joined(this.queue);
    this.queue.length = 0;
    this.queued = 0;
    return chunk;
  }
  resume() {
    this.paused = false;
    this.source.pull();
  }
  settleRead() {
    this.read.resolve = this.read.reject = void 0;
  }
  rejectWaiting(error) {
    const read = this.read.reject;
    const whole = this.whole?.reject;
    this.settleRead();
    this.whole = void 0;
    if (read !== void 0 || whole !== void 0) this.state = RELEASED;
    read?.(error);
    whole?.(error);
  }
};

// core/src/upstream/undici-handler.ts
var DEADLINE_CODE = "MODELMUX_UPSTREAM_DEADLINE";

// core/src/upstream/client.ts
var TIMEOUT_CODES = /* @__PURE__ */ new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "UND_ERR_CONNECT_TIMEOUT", DEADLINE_CODE]);
function isTimeout(error) {
  return TIMEOUT_CODES.has(error?.code ?? "");
}
var NETWORK_CODE = /^(UND_ERR_|E[A-Z]+$)/;
var isAbort = (error) => error instanceof Error && error.name === "AbortError";
function toUpstreamError(error, provider, timeoutMs) {
  if (error instanceof ModelmuxError) return error;
  if (isTimeout(error)) {
    const idle = error.idleTimeoutMs;
    return connectionFailure(idle ? upstreamIdle(provider, idle) : upstreamTimeout(provider, timeoutMs));
  }
  if (isAbort(error)) return error;
  const code = error?.code;
  if (code === UPSTREAM_BODY_TOO_LARGE) return tooLargeError(error, provider);
  if (error instanceof UndiciError || typeof code === "string" && NETWORK_CODE.test(code)) {
    return connectionFailure(upstreamError(`Provider '${provider}' failed: the connection broke (${typeof code === "string" ? code : error.message}).`, error));
  }
  return error;
}
var connectionFailures = /* @__PURE__ */ new WeakSet();
function connectionFailure(error) {
  connectionFailures.add(error);
  return error;
}
function isConnectionFailure(error) {
  return error instanceof ModelmuxError && connectionFailures.has(error);
}
function tooLargeError({ limit, part }, provider) {
  const what = part === "event" ? "a stream event" : "a reply";
  return upstreamError(
    `Provider '${provider}' sent ${what} larger than the limit of ${limit} bytes (server.upstream_body_limit); the rest was not read. Raise server.upstream_body_limit if its replies are this large.`
  );
}
var bodyFailures = /* @__PURE__ */ new WeakSet();
function isBrokenReply(error) {
  return error instanceof ModelmuxError && bodyFailures.has(error);
}

// core/src/upstream/call-abort.ts
var ControllerListener = class {
  /** `call`: the hook of a provider call, which the core may end itself (`CallAbort.end`). */
  constructor(call) {
    this.call = call;
  }
  call;
  controller = new AbortController();
  onAbort() {
    const message = this.call?.ended ? "The router stopped reading the reply." : "The client closed the connection.";
    this.controller.abort(Object.assign(new Error(message), { name: "AbortError" }));
  }
};
var CallAbort = class {
  constructor(request) {
    this.request = request;
  }
  request;
  /** `end` was called. */
  ended = false;
  listeners;
  /** Listening to the request's hook. */
  following = false;
  signalListener;
  get aborted() {
    return this.ended || this.request.aborted;
  }
  addAbortListener(listener) {
    if (this.aborted) {
      listener.onAbort();
      return;
    }
    (this.listeners ??= []).push(listener);
    if (this.following) return;
    this.following = true;
    this.request.addAbortListener(this);
  }
  removeAbortListener(listener) {
    const listeners = this.listeners;
    const at = listeners?.indexOf(listener) ?? -1;
    if (at < 0) return;
    listeners.splice(at, 1);
    if (listeners.length === 0) this.unfollow();
  }
  /** The request's hook fired: the client went away. */
  onAbort() {
    this.following = false;
    this.fire();
  }
  /** Fires this hook, and not the request's: the core no longer needs the call's upstream reply. */
  end() {
    if (this.aborted) return;
    this.ended = true;
    this.unfollow();
    this.fire();
  }
  /** An `AbortSignal` that aborts with this hook, for code that takes only signals. */
  get signal() {
    if (!this.signalListener) {
      this.signalListener = new ControllerListener(this);
      this.addAbortListener(this.signalListener);
    }
    return this.signalListener.controller.signal;
  }
  unfollow() {
    if (!this.following) return;
    this.following = false;
    this.request.removeAbortListener(this);
  }
  fire() {
    const listeners = this.listeners;
    this.listeners = void 0;
    if (listeners) for (const listener of listeners) listener.onAbort();
  }
};

// core/src/upstream/provider-call.ts
var ABORT_HOOK = /* @__PURE__ */ Symbol("modelmux.abortHook");
var TAKE_REPLY = /* @__PURE__ */ Symbol("modelmux.takeReply");
var BY_READERS = 0;
var HELD = 1;
var OVER = 2;
var CoreCall = class {
  constructor(x, model, timeoutMs) {
    this.model = model;
    this.timeoutMs = timeoutMs;
    this[ABORT_HOOK] = new CallAbort(x.abort);
    this.requestId = x.requestId;
  }
  model;
  timeoutMs;
  [ABORT_HOOK];
  requestId;
  /** `routing.timeouts.idle` of the call's target: the longest silence between reply chunks (`send.ts`); 0 is none. */
  idleTimeoutMs = 0;
  /** `routing.timeouts.connect` of the call's target: the longest a new connection may take; 0 is undici's default. */
  connectTimeoutMs = 0;
  /** The request continues its final assistant message (`ProviderCall.continuation`). */
  continuation = false;
  /** A successful reply's head came (`sendUpstream`): a failure from now on is a reply that broke off, not a refused connection. */
  replied = false;
  deadlines = BY_READERS;
  /** The requests whose deadline is held: usually one. */
  held;
  /** Made on first read, and aborted with the hook (`CallAbort.signal`). */
  get signal() {
    return this[ABORT_HOOK].signal;
  }
  /**
   * The core stopped reading the provider's reply before its end (a stream whose answer is whole,
   * and whose upstream holds its connection open): the upstream requests made with this call's
   * hook or signal are cancelled. The client is not gone: the request's own hook does not fire.
   */
  cancel() {
    this[ABORT_HOOK].end();
  }
  /** The core frames this call's stream: it ends its replies' whole-wait deadlines itself (`streaming`). */
  holdDeadlines() {
    if (this.deadlines === BY_READERS) this.deadlines = HELD;
  }
  /** The core has the stream's first chunk to send: the held deadlines are over. */
  streaming() {
    if (this.deadlines !== HELD) return;
    this.deadlines = OVER;
    const held = this.held;
    this.held = void 0;
    if (Array.isArray(held)) for (const request of held) request.releaseDeadline();
    else held?.releaseDeadline();
  }
  [TAKE_REPLY](body) {
    this.replied = true;
    if (this.deadlines !== HELD || !(body instanceof StreamedBody)) return;
    const request = body.source;
    request.holdDeadline();
    const held = this.held;
    if (held === void 0) this.held = request;
    else if (Array.isArray(held)) held.push(request);
    else this.held = [held, request];
  }
};
function providerCall(x, model, timeoutMs) {
  return new CoreCall(x, model, timeoutMs);
}

// core/src/routing/backoff.ts
function backoffDelay(retry, retryIndex, random) {
  if (retry.backoffMs <= 0 || retry.maxBackoffMs <= 0) return 0;
  const cap = Math.min(retry.maxBackoffMs, retry.backoffMs * 2 ** Math.max(0, retryIndex));
  return Math.floor(random() * cap);
}
var first = (value) => Array.isArray(value) ? value[0] : value;
var SECONDS = /^\d+(?:\.\d+)?$/;
function parseRetryAfter(source, now) {
  const ms = source["retry-after-ms"] == null ? void 0 : first(source["retry-after-ms"]);
  if (ms !== void 0 && ms !== "") {
    const value = typeof ms === "number" ? ms : Number(ms.trim());
    if (Number.isFinite(value) && value >= 0) return value;
  }
  const header = source["retry-after"] == null ? void 0 : first(source["retry-after"])?.trim();
  if (!header) return void 0;
  if (SECONDS.test(header)) return Number(header) * 1e3;
  const date = Date.parse(header);
  return Number.isNaN(date) ? void 0 : Math.max(0, date - now);
}
function retryWait(retry, retryIndex, retryAfterMs, random) {
  if (retryAfterMs === void 0) return backoffDelay(retry, retryIndex, random);
  return retryAfterMs > retry.maxRetryAfterMs ? void 0 : retryAfterMs;
}

// core/src/routing/failure.ts
var RETRYABLE_STATUS = /* @__PURE__ */ new Set([408, 429, 500, 502, 503, 504, 529]);
var CONTENT_POLICY_CODES = /* @__PURE__ */ new Set(["content_policy_violation", "content_filter"]);
var toNextTarget = /* @__PURE__ */ new WeakSet();
function passToNextTarget(error) {
  toNextTarget.add(error);
  return error;
}
function isAbortError(error) {
  return error instanceof Error && error.name === "AbortError";
}
function classifyFailure(error, now = Date.now()) {
  if (!(error instanceof ModelmuxError)) {
    if (isAbortError(error)) return { outcome: "final", reason: "client left" };
    const mapped = toUpstreamError(error, "upstream", 0);
    return mapped instanceof ModelmuxError ? classifyFailure(mapped, now) : { outcome: "final", reason: "internal error" };
  }
  if (error.code === "upstream_timeout") return { outcome: "timeout", reason: "timeout" };
  if (toNextTarget.has(error)) return { outcome: "next", reason: error.code ?? "refused" };
  const upstream = error.upstream;
  if (upstream !== void 0) {
    const status = upstream.status;
    const retryAfterMs = parseRetryAfter({ "retry-after": upstream.retryAfter, "retry-after-ms": upstream.retryAfterMs }, now);
    const failure = { outcome: "final", status, reason: `status ${status}` };
    if (retryAfterMs !== void 0) failure.retryAfterMs = retryAfterMs;
    if (RETRYABLE_STATUS.has(status)) failure.outcome = "retryable";
    else if (error.code === "context_length_exceeded") {
      failure.outcome = "next";
      failure.reason = "context_length_exceeded";
    } else if (error.code !== null && CONTENT_POLICY_CODES.has(error.code)) failure.reason = "content policy";
    else if (status >= 500) failure.outcome = "next";
    return failure;
  }
  if (isBrokenReply(error)) return { outcome: "next", reason: "reply broke off" };
  if (isConnectionFailure(error)) return { outcome: "retryable", reason: "connection failed" };
  if (error.code === "upstream_error") return { outcome: "next", reason: "unreadable reply" };
  if (error.code !== null && CONTENT_POLICY_CODES.has(error.code)) return { outcome: "final", reason: "content policy" };
  return { outcome: "final", reason: error.code ?? `status ${error.status}` };
}

// core/src/routing/attempts.ts
var recordsOfErrors = /* @__PURE__ */ new WeakMap();
function attemptsOf(error) {
  return typeof error === "object" && error !== null ? recordsOfErrors.get(error) : void 0;
}
function runAttempts(targets2, run, options) {
  const first2 = targets2[0];
  if (first2 === void 0 || options.abort.aborted || options.skip?.(first2) !== void 0 || options.breakers.state(first2) !== "closed") {
    return attemptAll(targets2, run, options);
  }
  const now = options.now ?? performanceNow;
  const started = now();
  return run(first2, 1).then(
    (value) => {
      options.breakers.success(first2);
      return { value, target: first2, attempts: [{ target: first2.entry.name, outcome: "ok", durationMs: now() - started, waitMs: 0 }] };
    },
    (error) => attemptAll(targets2, run, options, { error: options.failed ? options.failed(first2, error) : error, started })
  );
}
async function attemptAll(targets2, run, options, firstFailure) {
  const state = new AttemptRun(run, options);
  try {
    const { breakers, skip } = options;
    let refused;
    let circuitOpen;
    if (firstFailure !== void 0 && await state.tryTarget(targets2[0], firstFailure)) return state.result(targets2[0]);
    for (let i = firstFailure === void 0 ? 0 : 1; i < targets2.length; i++) {
      const target2 = targets2[i];
      const refusal2 = skip?.(target2);
      if (refusal2 !== void 0) {
        state.skipped(target2, refusal2.code ?? refusal2.message);
        refused ??= refusal2;
      } else if (!breakers.admit(target2)) {
        state.skipped(target2, "circuit open");
        (circuitOpen ??= []).push(target2);
      } else if (await state.tryTarget(target2)) {
        return state.result(target2);
      }
    }
    if (!state.tried && circuitOpen !== void 0) {
      const target2 = breakers.soonest(circuitOpen);
      breakers.force(target2);
      if (await state.tryTarget(target2)) return state.result(target2);
    }
    throw state.tried ? state.lastError : refused ?? internalError(new Error("runAttempts: the request has no targets"));
  } catch (error) {
    if (typeof error === "object" && error !== null) recordsOfErrors.set(error, state.records);
    throw error;
  }
}
var AttemptRun = class {
  constructor(run, options) {
    this.run = run;
    this.options = options;
    this.now = options.now ?? performanceNow;
  }
  run;
  options;
  records = [];
  tried = false;
  lastError;
  value;
  attempt = 0;
  now;
  skipped(target2, reason) {
    this.records.push({ target: target2.entry.name, outcome: "skipped", durationMs: 0, waitMs: 0, reason });
  }
  result(target2) {
    return { value: this.value, target: target2, attempts: this.records };
  }
  /**
   * Tries `target` and its retries (already admitted by its breaker). True once one answered;
   * false to go on to the next target; throws what ends the request.
   */
  async tryTarget(target2, firstFailure) {
    const { breakers, abort } = this.options;
    const retry = target2.settings.retry;
    const name = target2.entry.name;
    let waitMs = 0;
    for (let retryIndex = 0; ; retryIndex++) {
      if (abort.aborted && firstFailure === void 0) {
        breakers.release(target2);
        throw clientLeft();
      }
      this.tried = true;
      const started = firstFailure?.started ?? this.now();
      let error = ANSWERED;
      if (firstFailure !== void 0) {
        this.attempt = 1;
        error = firstFailure.error;
        firstFailure = void 0;
      } else {
        try {
          this.value = await this.run(target2, ++this.attempt);
        } catch (caught) {
          error = this.options.failed ? this.options.failed(target2, caught) : caught;
        }
      }
      if (error !== ANSWERED) {
        const durationMs = this.now() - started;
        if (abort.aborted || isAbortError(error)) {
          breakers.release(target2);
          this.records.push({ target: name, outcome: "final", durationMs, waitMs, reason: "client left" });
          throw error;
        }
        const failure = classifyFailure(error);
        this.records.push({ target: name, outcome: failure.outcome, status: failure.status, durationMs, waitMs, reason: failure.reason });
        this.lastError = error;
        if (failure.outcome === "retryable" || failure.outcome === "timeout") breakers.failure(target2);
        else if (failure.status !== void 0) breakers.success(target2);
        else breakers.release(target2);
        if (failure.outcome === "final") throw error;
        if (failure.outcome !== "retryable" || retryIndex >= retry.attempts || breakers.state(target2) !== "closed") return false;
        const wait = retryWait(retry, retryIndex, failure.retryAfterMs, this.options.random ?? Math.random);
        if (wait === void 0) return false;
        waitMs = wait;
        if (wait > 0) await (this.options.sleep ?? sleep)(wait, abort);
        if (!breakers.admit(target2)) return false;
        continue;
      }
      this.records.push({ target: name, outcome: "ok", durationMs: this.now() - started, waitMs });
      breakers.success(target2);
      return true;
    }
  }
};
var performanceNow = () => performance.now();
var ANSWERED = /* @__PURE__ */ Symbol("answered");
function clientLeft() {
  return Object.assign(new Error("The client closed the connection."), { name: "AbortError" });
}
function sleep(ms, abort) {
  return new Promise((resolve) => {
    const listener = {
      onAbort() {
        clearTimeout(timer);
        resolve();
      }
    };
    const timer = setTimeout(() => {
      abort.removeAbortListener(listener);
      resolve();
    }, ms);
    abort.addAbortListener(listener);
  });
}

// core/src/routing/routed-call.ts
function bothGrants(first2, answering, price) {
  return {
    headers: first2.headers,
    settle(usage) {
      first2.settle(usage, { price });
      answering.settle(usage);
    }
  };
}
function priceOf(pricing, target2) {
  const price = pricing.priceOf(target2.entry.name);
  return price && { model: target2.entry.name, price };
}
function firstTokenTimeout(target2) {
  const seconds2 = target2.settings.timeouts.firstTokenMs / 1e3;
  return new ModelmuxError(`Provider '${target2.entry.provider}' sent no content within first_token (${seconds2}s).`, {
    status: 504,
    type: "api_error",
    code: "upstream_timeout"
  });
}
function withFirstToken(target2, call, attempt, dispose2) {
  const ms = target2.settings.timeouts.firstTokenMs;
  if (ms <= 0) return attempt;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      call.cancel();
      reject(firstTokenTimeout(target2));
      attempt.then(dispose2, () => {
      });
    }, ms);
    attempt.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error) => {
        clearTimeout(timer);
        reject(error);
      }
    );
  });
}
var RoutedRun = class {
  constructor(x, request, pricing) {
    this.x = x;
    this.request = request;
    this.pricing = pricing;
  }
  x;
  request;
  pricing;
  grant;
  /** The grant of the attempt that answered, when it is not the first. */
  answering;
  /** Upstream calls made (`x-modelmux-attempts`): a target skipped or refused by a rate limit made none. */
  calls = 0;
  /** The attempt under way (attempts run one at a time): its call and, past the first, its own grant. */
  call;
  laterGrant;
  /** One attempt on `target` (for `runAttempts`): no async frame when no limit is configured. */
  attemptOn = (target2) => {
    const { entry: entry2 } = target2;
    const { x, request } = this;
    this.call = this.laterGrant = void 0;
    if (entry2.model) x.model = entry2.name;
    const first2 = this.grant === void 0 && !request.providerOnly;
    let pending;
    try {
      pending = acquireRateLimit(x, {
        provider: entry2.provider,
        reserve: request.reserve,
        price: x.rateLimits && priceOf(this.pricing, target2),
        providerOnly: !first2
      });
    } catch (error) {
      return Promise.reject(refusedAttempt(error, first2));
    }
    if (pending instanceof Promise) {
      return pending.then(
        (granted) => this.start(target2, first2, granted),
        (error) => Promise.reject(refusedAttempt(error, first2))
      );
    }
    return this.start(target2, first2, pending);
  };
  /**
   * A failed attempt (`AttemptOptions.failed`): it holds no tokens, its own grant is released (the
   * request's grant is settled by the endpoint); a connection refused or reset once a reply's head
   * came goes to the next target, never the same one.
   */
  failed = (_target, error) => {
    const { call } = this;
    this.laterGrant?.settle();
    this.call = this.laterGrant = void 0;
    if (call?.replied && isConnectionFailure(error) && error.code !== "upstream_timeout") return passToNextTarget(error);
    return error;
  };
  start(target2, first2, granted) {
    const { entry: entry2 } = target2;
    const { request } = this;
    if (first2) this.grant = granted;
    else this.answering = this.laterGrant = granted;
    const call = this.call = providerCall(this.x, entry2.model, entry2.timeoutMs);
    this.calls++;
    if (request.firstToken) call.idleTimeoutMs = target2.settings.timeouts.idleMs;
    call.connectTimeoutMs = target2.settings.timeouts.connectMs;
    let pending;
    try {
      pending = request.run(target2, call);
    } catch (error) {
      pending = Promise.reject(error);
    }
    return request.firstToken ? withFirstToken(target2, call, pending, request.dispose) : pending;
  }
};
function headersOf(base2, grant, calls, model) {
  const headers = base2 === void 0 ? {} : Object.assign({}, base2);
  const limits = grant.headers;
  for (const name in limits) headers[name] = limits[name];
  headers["x-modelmux-attempts"] = calls === 1 ? "1" : String(calls);
  if (model !== void 0) headers["x-modelmux-model"] = model;
  return headers;
}
function refusedAttempt(error, first2) {
  const providerFull = !first2 ? error instanceof ModelmuxError && error.status === 429 : isProviderRefusal(error);
  return providerFull ? passToNextTarget(error) : error;
}
function routeRequest(ctx2, x, request) {
  const routed2 = new RoutedRun(x, request, ctx2.pricing);
  return runAttempts(request.targets, routed2.attemptOn, { breakers: ctx2.breakers, abort: x.abort, skip: request.skip, failed: routed2.failed }).then(
    ({ value, target: target2, attempts }) => {
      const grant = routed2.grant ?? routed2.answering;
      x.attempts = attempts;
      if (target2.entry.model) x.model = target2.entry.name;
      const headers = headersOf(request.replyHeaders, grant, routed2.calls, target2.entry.model ? target2.entry.name : void 0);
      return { value, target: target2, grant: routed2.grant && routed2.answering ? bothGrants(grant, routed2.answering, priceOf(ctx2.pricing, target2)) : grant, headers };
    },
    (error) => {
      const attempts = attemptsOf(error);
      if (attempts) x.attempts = attempts;
      if (routed2.calls > 0) x.routingHeaders = { "x-modelmux-attempts": String(routed2.calls) };
      routed2.grant?.settle();
      throw error;
    }
  );
}

// core/src/server/request-abort.ts
var RequestAbort = class {
  aborted = false;
  listeners;
  signalListener;
  addAbortListener(listener) {
    if (this.aborted) {
      listener.onAbort();
      return;
    }
    (this.listeners ??= []).push(listener);
  }
  removeAbortListener(listener) {
    const at = this.listeners?.indexOf(listener) ?? -1;
    if (at >= 0) this.listeners.splice(at, 1);
  }
  /** Marks the request abandoned and tells every listener, once. */
  abort() {
    if (this.aborted) return;
    this.aborted = true;
    const listeners = this.listeners;
    this.listeners = void 0;
    if (listeners) for (const listener of listeners) listener.onAbort();
  }
  /** An `AbortSignal` that aborts with this hook, for code that takes only signals. */
  get signal() {
    if (!this.signalListener) {
      this.signalListener = new ControllerListener();
      this.addAbortListener(this.signalListener);
    }
    return this.signalListener.controller.signal;
  }
};

// bench/micro/route-request.ts
var REQUESTS = Number(process.argv[2] ?? 2e5);
var ROUNDS = Number(process.argv[3] ?? 11);
var entry = { name: "openai/gpt-4o", provider: "openai", model: "gpt-4o", timeoutMs: 6e4, capabilities: {} };
var target = {
  entry,
  settings: {
    retry: { attempts: 2, initialMs: 250, maxMs: 8e3, maxRetryAfterMs: 2e4 },
    timeouts: { connectMs: 1e4, firstTokenMs: 3e4, idleMs: 3e4 },
    circuitBreaker: { failures: 5, cooldownMs: 3e4 }
  }
};
var targets = [target];
var ctx = { breakers: new CircuitBreakers(), pricing: createPricing({}) };
var reply = { id: "chatcmpl-1", usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } };
function exchange() {
  return { requestId: "r1", abort: new RequestAbort(), rateLimits: void 0 };
}
async function straight() {
  const x = exchange();
  const granted = acquireRateLimit(x, { provider: entry.provider, reserve: { tokens: 10 } });
  const grant = granted instanceof Promise ? await granted : granted;
  const call = providerCall(x, entry.model, entry.timeoutMs);
  const completion = await Promise.resolve(call).then(() => reply);
  grant.settle(completion.usage);
}
var dispose = () => {
};
async function routed(stream) {
  const x = exchange();
  const { value, grant } = await routeRequest(ctx, x, {
    targets,
    skip: () => void 0,
    reserve: { tokens: 10 },
    firstToken: stream,
    dispose: stream ? dispose : void 0,
    run: (_target, call) => Promise.resolve(call).then(() => reply)
  });
  grant.settle(value.usage);
}
async function round(run) {
  const start = process.cpuUsage();
  for (let i = 0; i < REQUESTS; i++) await run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / REQUESTS;
}
var median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
var WAYS = { straight, routed: () => routed(false), "routed stream": () => routed(true) };
var results = new Map(Object.keys(WAYS).map((name) => [name, []]));
for (let r = 0; r < ROUNDS; r++) for (const [name, run] of Object.entries(WAYS)) results.get(name).push(await round(run));
var base = median(results.get("straight"));
for (const [name, values] of results) {
  const m = median(values);
  console.log(`${name.padEnd(14)} ${m.toFixed(3)} \xB5s (least ${Math.min(...values).toFixed(3)})${name === "straight" ? "" : `, +${(m - base).toFixed(3)}`}`);
}
