/**
 * A request's upstream calls, routed (docs/interface.md, "Routing and resilience"): the endpoint
 * says how one attempt runs on a target; this runs the attempts (`attempts.ts`) with a provider
 * call, a rate-limit grant and, for a stream, the `first_token` timeout per attempt, and reports
 * what answered: the exchange's model and attempts for the log, and the `x-modelmux-*` headers.
 *
 * Rate limits: the first attempt counts against the app's, the developer's and its provider's
 * limits at once, as a request without routing does; each later attempt against its provider's
 * only, and a provider whose limit is full sends the request on to its next target.
 */
import type { AppContext } from "../app-context.ts";
import { ModelmuxError } from "../errors.ts";
import type { Exchange } from "../server/exchange.ts";
import type { Pricing } from "../operations/pricing.ts";
import { acquireRateLimit, isProviderRefusal, type RateLimitGrant, type TargetPrice, type TokenReservation } from "../rate-limit/acquire.ts";
import { isConnectionFailure } from "../upstream/client.ts";
import { providerCall, type CoreCall } from "../upstream/provider-call.ts";
import { attemptsOf, runAttempts } from "./attempts.ts";
import { passToNextTarget } from "./failure.ts";
import type { Target } from "./types.ts";

export interface RoutedRequest<T> {
  targets: readonly Target[];
  /** Why `target` cannot serve the request (its capabilities), as the error to give when none can. */
  skip?(target: Target): ModelmuxError | undefined;
  /** Tokens each grant holds until it is settled. */
  reserve?: TokenReservation;
  /**
   * Streams: the attempt must have given its value (the first item to send) within the target's
   * `timeouts.first_token`, else its call is cancelled and the next target tried.
   */
  firstToken?: boolean;
  /** One attempt: must throw (not return) a failure. */
  run(target: Target, call: CoreCall): Promise<T>;
  /** Releases what an attempt gave after `first_token` had already failed it (its stream). */
  dispose?(value: T): void;
  /**
   * The request's app and developer limits were counted already (a stream's continuation): each
   * attempt counts against its provider's limit only, and a full one moves on to the next target.
   */
  providerOnly?: boolean;
  /** Headers the reply begins with (a stream's `SSE_HEADERS`): `Routed.headers` has them first. */
  replyHeaders?: Readonly<Record<string, string>>;
}

export interface Routed<T> {
  value: T;
  target: Target;
  /** The request's grant: settle it once with the answer's usage. */
  grant: RateLimitGrant;
  /** `x-modelmux-model`, `x-modelmux-attempts` and the grant's `x-ratelimit-*`. */
  headers: Record<string, string>;
}

/**
 * The grant of a request answered by a later attempt: the usage counts for the app and developer
 * (the first grant, at the price of the target that answered; the first grant's provider, whose
 * call failed, counts none) and for the provider that answered (its own grant).
 */
function bothGrants(first: RateLimitGrant, answering: RateLimitGrant, price: TargetPrice | undefined): RateLimitGrant {
  return {
    headers: first.headers,
    settle(usage) {
      first.settle(usage, { price });
      answering.settle(usage);
    },
  };
}

/** A target's price for budgets (README, "Budgets"); none for a model `pricing` does not name. */
function priceOf(pricing: Pricing, target: Target): TargetPrice | undefined {
  const price = pricing.priceOf(target.entry.name);
  return price && { model: target.entry.name, price };
}

/** 504 for an attempt whose stream gave nothing to send within `first_token`. */
function firstTokenTimeout(target: Target): ModelmuxError {
  const seconds = target.settings.timeouts.firstTokenMs / 1000;
  return new ModelmuxError(`Provider '${target.entry.provider}' sent no content within first_token (${seconds}s).`, {
    status: 504,
    type: "api_error",
    code: "upstream_timeout",
  });
}

/** `attempt`, failed with the `first_token` timeout when it has not settled in time; the call is cancelled then. */
function withFirstToken<T>(target: Target, call: CoreCall, attempt: Promise<T>, dispose?: (value: T) => void): Promise<T> {
  const ms = target.settings.timeouts.firstTokenMs;
  if (ms <= 0) return attempt;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      call.cancel();
      reject(firstTokenTimeout(target));
      // What the cancelled attempt settles with later is nobody's: a stream it still gives is released.
      attempt.then(dispose, () => {});
    }, ms);
    attempt.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** One request's routing: its grants, and what an attempt does around `run`. */
class RoutedRun<T> {
  grant: RateLimitGrant | undefined;
  /** The grant of the attempt that answered, when it is not the first. */
  answering: RateLimitGrant | undefined;
  /** Upstream calls made (`x-modelmux-attempts`): a target skipped or refused by a rate limit made none. */
  calls = 0;
  /** The attempt under way (attempts run one at a time): its call and, past the first, its own grant. */
  private call: CoreCall | undefined;
  private laterGrant: RateLimitGrant | undefined;

  constructor(
    private readonly x: Exchange,
    private readonly request: RoutedRequest<T>,
    private readonly pricing: Pricing,
  ) {}

  /** One attempt on `target` (for `runAttempts`): no async frame when no limit is configured. */
  readonly attemptOn = (target: Target): Promise<T> => {
    const { entry } = target;
    const { x, request } = this;
    this.call = this.laterGrant = undefined;
    // A call that names no model (a responses poll) leaves the log's model unset.
    if (entry.model) x.model = entry.name;
    // The app's and developer's limits count the request at its first attempt that gets a grant.
    const first = this.grant === undefined && !request.providerOnly;
    let pending: RateLimitGrant | Promise<RateLimitGrant>;
    try {
      pending = acquireRateLimit(x, {
        provider: entry.provider,
        reserve: request.reserve,
        price: x.rateLimits && priceOf(this.pricing, target),
        providerOnly: !first,
      });
    } catch (error) {
      return Promise.reject(refusedAttempt(error, first));
    }
    if (pending instanceof Promise) {
      return pending.then(
        (granted) => this.start(target, first, granted),
        (error: unknown) => Promise.reject(refusedAttempt(error, first)),
      );
    }
    return this.start(target, first, pending);
  };

  /**
   * A failed attempt (`AttemptOptions.failed`): it holds no tokens, its own grant is released (the
   * request's grant is settled by the endpoint); a connection refused or reset once a reply's head
   * came goes to the next target, never the same one.
   */
  readonly failed = (_target: Target, error: unknown): unknown => {
    const { call } = this;
    this.laterGrant?.settle();
    this.call = this.laterGrant = undefined;
    if (call?.replied && isConnectionFailure(error) && (error as ModelmuxError).code !== "upstream_timeout") return passToNextTarget(error as ModelmuxError);
    return error;
  };

  private start(target: Target, first: boolean, granted: RateLimitGrant): Promise<T> {
    const { entry } = target;
    const { request } = this;
    if (first) this.grant = granted;
    else this.answering = this.laterGrant = granted;
    const call = (this.call = providerCall(this.x, entry.model, entry.timeoutMs));
    this.calls++;
    // `idle` is a stream's limit: a JSON reply's head comes only once the whole answer is made.
    if (request.firstToken) call.idleTimeoutMs = target.settings.timeouts.idleMs;
    call.connectTimeoutMs = target.settings.timeouts.connectMs;
    let pending: Promise<T>;
    try {
      pending = request.run(target, call);
    } catch (error) {
      pending = Promise.reject(error);
    }
    return request.firstToken ? withFirstToken(target, call, pending, request.dispose) : pending;
  }
}

/**
 * The reply's headers: `base`, the grant's `x-ratelimit-*` (none without limits),
 * `x-modelmux-attempts` and, for a call that names a model, `x-modelmux-model`. Made in one object,
 * by assignment: a spread copy given more keys takes V8's slow path (docs/architecture.md, "Hot paths").
 */
function headersOf(base: Readonly<Record<string, string>> | undefined, grant: RateLimitGrant, calls: number, model: string | undefined): Record<string, string> {
  const headers: Record<string, string> = base === undefined ? {} : Object.assign({}, base);
  const limits = grant.headers;
  for (const name in limits) headers[name] = limits[name]!;
  headers["x-modelmux-attempts"] = calls === 1 ? "1" : String(calls);
  if (model !== undefined) headers["x-modelmux-model"] = model;
  return headers;
}

/** A rate-limit refusal: the app's or developer's limit ends the request; a provider's full limit moves it on. */
function refusedAttempt(error: unknown, first: boolean): unknown {
  const providerFull = !first ? error instanceof ModelmuxError && error.status === 429 : isProviderRefusal(error);
  return providerFull ? passToNextTarget(error as ModelmuxError) : error;
}

/**
 * Runs the request's attempts. The exchange's `model` and `attempts` name what answered (or the
 * last that failed) for the access log.
 * @throws what `runAttempts` throws: the last provider error, a final one, the client's abort
 */
export function routeRequest<T>(ctx: AppContext, x: Exchange, request: RoutedRequest<T>): Promise<Routed<T>> {
  const routed = new RoutedRun(x, request, ctx.pricing);
  return runAttempts(request.targets, routed.attemptOn, { breakers: ctx.breakers, abort: x.abort, skip: request.skip, failed: routed.failed }).then(
    ({ value, target, attempts }) => {
      // With `providerOnly`, the answering attempt's grant is the request's.
      const grant = routed.grant ?? routed.answering!;
      x.attempts = attempts;
      if (target.entry.model) x.model = target.entry.name;
      const headers = headersOf(request.replyHeaders, grant, routed.calls, target.entry.model ? target.entry.name : undefined);
      return { value, target, grant: routed.grant && routed.answering ? bothGrants(grant, routed.answering, priceOf(ctx.pricing, target)) : grant, headers };
    },
    (error: unknown) => {
      const attempts = attemptsOf(error);
      if (attempts) x.attempts = attempts;
      if (routed.calls > 0) x.routingHeaders = { "x-modelmux-attempts": String(routed.calls) };
      routed.grant?.settle();
      throw error;
    },
  );
}
