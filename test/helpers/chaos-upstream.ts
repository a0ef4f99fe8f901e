/**
 * A scriptable misbehaving upstream for the router's resilience tests (retries, fallbacks, circuit
 * breaking, timeouts, streams continued on another target): a real `node:http` server on
 * 127.0.0.1 that speaks OpenAI Chat Completions on `…/chat/completions`, Anthropic Messages on
 * `…/messages`, OpenAI's Responses API on `…/responses` and its image generation on
 * `…/images/generations` (`chaos-wire.ts`), and does to each request what the script says (`chaos-behaviours.ts`): answer, answer an error with Retry-After,
 * reset the connection, hang, cut / stall / corrupt / fail a stream after N tokens, leave out the end
 * marker, be down for a while, refuse a prefill. Its answers are the deterministic tokens
 * `t0 t1 …`; a request ending with an assistant message gets the rest of them after that text, so
 * a stream continued on another target can be checked for repeated or missing text.
 *
 * Each request is recorded in `attempts` (arrival time, path, headers, body, what it was given,
 * the text it was sent, whether the client left early), so a test can check the attempts the
 * router made, their spacing and the prefill of a continuation.
 *
 * @example
 * const up = await startChaosUpstream({ tokens: 10 });
 * up.script({ ...CHAOS_ERRORS.rateLimit, retryAfter: "1" }, { cutAfter: 3 });
 * // provider-openai: base_url = up.openaiBaseUrl; provider-anthropic: base_url = up.anthropicBaseUrl
 * expect(up.attempts.map((a) => a.behaviour)).toEqual(["status", "cutAfter", "ok"]);
 * expect(up.attempts[2]!.prefill).toBe("t0 t1 t2");
 * await up.close();
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { deltasFor, stepOf, type ChaosBehaviour, type ChaosKind, type ChaosStep } from "./chaos-behaviours.ts";
import { carryOut, type ReplyContext } from "./chaos-reply.ts";
import { openaiWire } from "./chaos-openai-wire.ts";
import { prefillOf, wireFor, type ChaosRequestBody } from "./chaos-wire.ts";

export * from "./chaos-behaviours.ts";
export type { ChaosRequestBody } from "./chaos-wire.ts";

/** One request as the chaos upstream saw it. */
export interface ChaosAttempt {
  /** `performance.now()` when the request arrived, in ms. */
  at: number;
  method: string;
  /** Path and query. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The body parsed as JSON; undefined when it was not JSON. */
  body: ChaosRequestBody | undefined;
  /** What the request was given: a downFor window's requests say `downFor`; a refusePrefill or a spent downFor that answered says `ok`; a request the provider refuses whatever the script (unknown path, invalid body) says `status`. */
  behaviour: ChaosKind;
  /** The status sent; undefined for `reset` and `hang`, and while a delayed reply waits. */
  status?: number;
  /** The text of the final assistant message, when the request continues one. */
  prefill?: string;
  /** The answer text sent so far (the tokens written before any break). */
  sent: string;
  /** True once the client left before the reply was complete (never when the upstream broke it itself). */
  aborted: boolean;
  /** `performance.now()` when the reply ended, by either side. */
  endedAt?: number;
}

export interface ChaosUpstreamOptions {
  /** Tokens in a whole answer, unless a behaviour says otherwise; default 8. */
  tokens?: number;
  /** What a request gets when the script is empty; default `"ok"`. */
  default?: ChaosBehaviour;
  /** Goes into reply ids (`chatcmpl-<name>-<n>`, `msg_<name>_<n>`, `resp_<name>_<n>`, `img_<name>_<n>`) so a test can tell upstreams apart; default `chaos`. */
  name?: string;
  /** The prompt tokens every answer reports; default 10. */
  promptTokens?: number;
}

export interface ChaosUpstream {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly url: string;
  /** provider-openai's `base_url` for this upstream (`<url>/v1`). */
  readonly openaiBaseUrl: string;
  /** provider-anthropic's `base_url` for this upstream (`<url>`). */
  readonly anthropicBaseUrl: string;
  /** Queues behaviours (or arrays of them); each request takes the next one, then the default. */
  script(...behaviours: Array<ChaosBehaviour | readonly ChaosBehaviour[]>): void;
  /** What a request gets when the script is empty. */
  setDefault(behaviour: ChaosBehaviour): void;
  /** Every request since the last `reset()`, in arrival order; the same array for the upstream's life. */
  readonly attempts: ChaosAttempt[];
  /** Resolves with attempt `index` once it has arrived and its behaviour is chosen. */
  attempt(index: number): Promise<ChaosAttempt>;
  /** Resolves with attempt `index` once its reply is over: sent, broken, or left by the client. */
  finished(index: number): Promise<ChaosAttempt>;
  /** Forgets attempts, script, waiters and any downFor window; the default goes back to the option's. Requests still open stay out of the new round. */
  reset(): void;
  /** Closes the server and every open connection (hanging and stalled ones too). */
  close(): Promise<void>;
}

interface Waiter {
  promise: Promise<ChaosAttempt>;
  resolve(attempt: ChaosAttempt): void;
}

function waiterOf(waiters: Map<number, Waiter>, index: number): Waiter {
  let waiter = waiters.get(index);
  if (!waiter) {
    let resolve!: (attempt: ChaosAttempt) => void;
    waiter = { promise: new Promise<ChaosAttempt>((r) => (resolve = r)), resolve };
    waiters.set(index, waiter);
  }
  return waiter;
}

/** Starts a chaos upstream on a free port of 127.0.0.1. */
export async function startChaosUpstream(options: ChaosUpstreamOptions = {}): Promise<ChaosUpstream> {
  const { tokens = 8, name = "chaos", promptTokens = 10 } = options;
  const attempts: ChaosAttempt[] = [];
  const queue: ChaosBehaviour[] = [];
  let fallback: ChaosBehaviour = options.default ?? "ok";
  let round = 0;
  let arrivals = new Map<number, Waiter>();
  let finishes = new Map<number, Waiter>();
  // A downFor window: until when, and the error its requests get. A behaviour object opens one once.
  let down: { until: number; step: ChaosStep } | undefined;
  let opened = new WeakSet<object>();

  /** The step for a request arriving `now`: the open window's, else the script's next, else the default. */
  function choose(now: number, prefill: string | undefined): ChaosStep {
    if (down && now < down.until) return down.step;
    const given = queue.shift() ?? fallback;
    const step = stepOf(given);
    if (step.kind === "downFor" && typeof given === "object") {
      if (opened.has(given)) return { kind: "ok" };
      opened.add(given);
      down = { until: now + (step.windowMs ?? 0), step };
    }
    if (step.kind === "refusePrefill" && prefill === undefined) return { ...step, kind: "ok", error: undefined };
    return step;
  }

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const born = round;
    const index = attempts.length;
    const attempt: ChaosAttempt = { at: performance.now(), method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: undefined, behaviour: "ok", sent: "", aborted: false };
    attempts.push(attempt);
    let closed = false;
    let brokenByUs = false;
    res.on("close", () => {
      closed = true;
      attempt.endedAt = performance.now();
      if (!res.writableFinished && !brokenByUs) attempt.aborted = true;
      if (born === round) waiterOf(finishes, index).resolve(attempt);
    });

    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    try {
      attempt.body = JSON.parse(Buffer.concat(parts).toString("utf8")) as ChaosRequestBody;
    } catch {
      // Left undefined: the wire answers a body that is not JSON as its provider does.
    }
    const wire = wireFor(attempt.path);
    const prefill = prefillOf(attempt.body);
    if (prefill !== undefined) attempt.prefill = prefill;
    const body = attempt.body;
    const ctx: ReplyContext = {
      req,
      res,
      wire: wire ?? openaiWire,
      answer: { id: "", model: body?.model ?? "chaos-model", deltas: [], promptTokens, includeUsage: body?.stream_options?.include_usage === true },
      closed: () => closed,
      pause: (ms) =>
        new Promise<boolean>((resolve) => {
          if (ms <= 0 || closed) return resolve(!closed);
          const wake = () => (clearTimeout(timer), resolve(false));
          const timer = setTimeout(() => (res.off("close", wake), resolve(!closed)), ms);
          res.once("close", wake);
        }),
      breakConnection: (how) => {
        brokenByUs = true;
        if (how === "rst") req.socket.resetAndDestroy();
        else res.destroy();
      },
      recordStatus: (status) => void (attempt.status = status),
      recordSent: (text) => void (attempt.sent += text),
    };
    ctx.answer.id = ctx.wire.id(name, index);

    // What the provider refuses whatever the script says; the script is left for the next request.
    const refusal = wire ? wire.refusal(body, prefill) : `Invalid URL (${attempt.method} ${attempt.path})`;
    let step: ChaosStep;
    if (refusal !== undefined) step = { kind: "status", error: { status: wire ? 400 : 404, message: refusal } };
    else step = choose(attempt.at, prefill);
    attempt.behaviour = step.kind;
    ctx.answer.deltas = deltasFor(step.tokens ?? tokens, step.spacing, prefill);
    if (born === round) waiterOf(arrivals, index).resolve(attempt);
    if (closed) return;
    await carryOut(ctx, step, body?.stream === true);
  }

  const server = createServer((req, res) => void serve(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    openaiBaseUrl: `${url}/v1`,
    anthropicBaseUrl: url,
    attempts,
    script: (...behaviours) => void queue.push(...behaviours.flat()),
    setDefault: (behaviour) => void (fallback = behaviour),
    attempt: (index) => waiterOf(arrivals, index).promise,
    finished: (index) => waiterOf(finishes, index).promise,
    reset: () => {
      round++;
      attempts.length = 0;
      queue.length = 0;
      fallback = options.default ?? "ok";
      arrivals = new Map();
      finishes = new Map();
      down = undefined;
      opened = new WeakSet();
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
