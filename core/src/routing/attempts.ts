/**
 * The attempts of one request (docs/interface.md, "Routing and resilience"): its first target, that
 * target's retries, then each other target with its own, until one answers. A target that cannot
 * serve the request (`skip`) or whose circuit is open is passed over while another remains; when
 * every circuit is open, the one whose cooldown ends first is tried. When all fail, the error of
 * the last attempt that reached a provider is thrown, never one about a target that was skipped.
 * A client that leaves stops everything at once, waits included.
 */
import { internalError, type ModelmuxError } from "../errors.ts";
import type { AbortHook, AbortListener } from "../upstream/call-abort.ts";
import { retryWait } from "./backoff.ts";
import type { CircuitBreakers } from "./circuit-breaker.ts";
import { classifyFailure, isAbortError } from "./failure.ts";
import type { AttemptRecord, Target } from "./types.ts";

export interface AttemptOptions {
  /** The router's circuit breakers (one `CircuitBreakers` per process). */
  breakers: CircuitBreakers;
  /** The request's hook: fires when the client leaves (`RequestAbort`). */
  abort: AbortHook;
  /**
   * Why `target` cannot serve this request (its capabilities, its provider's limit is full), as
   * the error the client gets when no other target can; undefined when it can. The record keeps
   * the error's code (else its message) as the reason.
   */
  skip?(target: Target): ModelmuxError | undefined;
  /**
   * What a failed attempt's error is taken as (`routed-call.ts` releases the attempt's grant and
   * marks a broken connection here), before it is classified; once per failed attempt.
   */
  failed?(target: Target, error: unknown): unknown;
  /** Waits `ms`, ending at once (resolved) when `abort` fires. Default: a timer. */
  sleep?(ms: number, abort: AbortHook): Promise<void>;
  /** The clock for durations, in ms. Default `performance.now`. */
  now?(): number;
  /** A number in [0, 1) for the backoff's jitter. Default `Math.random`. */
  random?(): number;
}

/** What answered, and every attempt of the request (skipped targets included), for the headers and the log. */
export interface AttemptsResult<T> {
  value: T;
  target: Target;
  attempts: AttemptRecord[];
}

const recordsOfErrors = new WeakMap<object, readonly AttemptRecord[]>();

/** The attempts made before `error` was thrown by `runAttempts`; undefined for any other error. */
export function attemptsOf(error: unknown): readonly AttemptRecord[] | undefined {
  return typeof error === "object" && error !== null ? recordsOfErrors.get(error) : undefined;
}

/**
 * Runs `run` on `targets` in order, as the routing rules say, and returns the first value one
 * gives. `attempt` counts the request's attempts from 1. `run` must throw (not return) a failure,
 * and must not throw a retryable one once the client has received a byte.
 * @throws the error of the last attempt that reached a provider (`attemptsOf(error)` lists the
 *   attempts), a `final` one at once, the client's abort at once, or, when no target could be
 *   tried, the first target's `skip` error.
 * @example
 * const { value, target, attempts } = await runAttempts(plan.targets, (t) => t.entry.instance.chat(...), { breakers, abort: exchange.abort });
 */
export function runAttempts<T>(
  targets: readonly Target[],
  run: (target: Target, attempt: number) => Promise<T>,
  options: AttemptOptions,
): Promise<AttemptsResult<T>> {
  // Most requests: the first target can serve, its circuit is closed, and it answers. That path
  // makes one record and no async frames; anything else continues in `attemptAll`.
  const first = targets[0];
  if (first === undefined || options.abort.aborted || options.skip?.(first) !== undefined || options.breakers.state(first) !== "closed") {
    return attemptAll(targets, run, options);
  }
  const now = options.now ?? performanceNow;
  const started = now();
  return run(first, 1).then(
    (value) => {
      options.breakers.success(first);
      return { value, target: first, attempts: [{ target: first.entry.name, outcome: "ok", durationMs: now() - started, waitMs: 0 }] };
    },
    (error: unknown) => attemptAll(targets, run, options, { error: options.failed ? options.failed(first, error) : error, started }),
  );
}

/** The first attempt's failure, when `runAttempts` made that attempt itself. */
interface FirstFailure {
  error: unknown;
  started: number;
}

async function attemptAll<T>(
  targets: readonly Target[],
  run: (target: Target, attempt: number) => Promise<T>,
  options: AttemptOptions,
  firstFailure?: FirstFailure,
): Promise<AttemptsResult<T>> {
  const state = new AttemptRun(run, options);
  try {
    const { breakers, skip } = options;
    let refused: ModelmuxError | undefined;
    let circuitOpen: Target[] | undefined;
    // The first target was admitted and tried already: its failure is taken up where it left off.
    if (firstFailure !== undefined && (await state.tryTarget(targets[0]!, firstFailure))) return state.result(targets[0]!);
    for (let i = firstFailure === undefined ? 0 : 1; i < targets.length; i++) {
      const target = targets[i]!;
      const refusal = skip?.(target);
      if (refusal !== undefined) {
        state.skipped(target, refusal.code ?? refusal.message);
        refused ??= refusal;
      } else if (!breakers.admit(target)) {
        state.skipped(target, "circuit open");
        (circuitOpen ??= []).push(target);
      } else if (await state.tryTarget(target)) {
        return state.result(target);
      }
    }
    if (!state.tried && circuitOpen !== undefined) {
      const target = breakers.soonest(circuitOpen)!;
      breakers.force(target);
      if (await state.tryTarget(target)) return state.result(target);
    }
    throw state.tried ? state.lastError : (refused ?? internalError(new Error("runAttempts: the request has no targets")));
  } catch (error) {
    if (typeof error === "object" && error !== null) recordsOfErrors.set(error, state.records);
    throw error;
  }
}

/** The state of one request's attempts: its records, the last failure, and the value once one came. */
class AttemptRun<T> {
  readonly records: AttemptRecord[] = [];
  tried = false;
  lastError: unknown;
  private value: T | undefined;
  private attempt = 0;
  private readonly now: () => number;

  constructor(
    private readonly run: (target: Target, attempt: number) => Promise<T>,
    private readonly options: AttemptOptions,
  ) {
    this.now = options.now ?? performanceNow;
  }

  skipped(target: Target, reason: string): void {
    this.records.push({ target: target.entry.name, outcome: "skipped", durationMs: 0, waitMs: 0, reason });
  }

  result(target: Target): AttemptsResult<T> {
    return { value: this.value as T, target, attempts: this.records };
  }

  /**
   * Tries `target` and its retries (already admitted by its breaker). True once one answered;
   * false to go on to the next target; throws what ends the request.
   */
  async tryTarget(target: Target, firstFailure?: FirstFailure): Promise<boolean> {
    const { breakers, abort } = this.options;
    const retry = target.settings.retry;
    const name = target.entry.name;
    let waitMs = 0;
    for (let retryIndex = 0; ; retryIndex++) {
      if (abort.aborted && firstFailure === undefined) {
        breakers.release(target);
        throw clientLeft();
      }
      this.tried = true;
      const started = firstFailure?.started ?? this.now();
      let error: unknown = ANSWERED;
      if (firstFailure !== undefined) {
        // Attempt 1 was made by `runAttempts`; this is its failure.
        this.attempt = 1;
        error = firstFailure.error;
        firstFailure = undefined;
      } else {
        try {
          this.value = await this.run(target, ++this.attempt);
        } catch (caught) {
          error = this.options.failed ? this.options.failed(target, caught) : caught;
        }
      }
      if (error !== ANSWERED) {
        const durationMs = this.now() - started;
        if (abort.aborted || isAbortError(error)) {
          breakers.release(target);
          this.records.push({ target: name, outcome: "final", durationMs, waitMs, reason: "client left" });
          throw error;
        }
        const failure = classifyFailure(error);
        this.records.push({ target: name, outcome: failure.outcome, status: failure.status, durationMs, waitMs, reason: failure.reason });
        this.lastError = error;
        if (failure.outcome === "retryable" || failure.outcome === "timeout") breakers.failure(target);
        // The provider answered: the target is up, whatever it said.
        else if (failure.status !== undefined) breakers.success(target);
        else breakers.release(target);
        if (failure.outcome === "final") throw error;
        // A timeout is not tried again on the same target (a silent target stays silent).
        if (failure.outcome !== "retryable" || retryIndex >= retry.attempts || breakers.state(target) !== "closed") return false;
        const wait = retryWait(retry, retryIndex, failure.retryAfterMs, this.options.random ?? Math.random);
        // The provider asked for longer than max_retry_after: the next target, at once.
        if (wait === undefined) return false;
        waitMs = wait;
        if (wait > 0) await (this.options.sleep ?? sleep)(wait, abort);
        if (!breakers.admit(target)) return false;
        continue;
      }
      this.records.push({ target: name, outcome: "ok", durationMs: this.now() - started, waitMs });
      breakers.success(target);
      return true;
    }
  }
}

const performanceNow = (): number => performance.now();

/** `tryTarget`'s mark of an attempt that answered: no error. */
const ANSWERED: unique symbol = Symbol("answered");

/** The error of a request whose client left while the router waited, as an aborted call's reads. */
function clientLeft(): Error {
  return Object.assign(new Error("The client closed the connection."), { name: "AbortError" });
}

/** Waits `ms` or until `abort` fires, whichever comes first. */
function sleep(ms: number, abort: AbortHook): Promise<void> {
  return new Promise((resolve) => {
    const listener: AbortListener = {
      onAbort() {
        clearTimeout(timer);
        resolve();
      },
    };
    const timer = setTimeout(() => {
      abort.removeAbortListener(listener);
      resolve();
    }, ms);
    abort.addAbortListener(listener);
  });
}
