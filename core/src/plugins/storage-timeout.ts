/**
 * The core's bound on every storage call (`storage.timeout`, README "Stored completions"):
 * whatever the plugin, a request never waits on its storage longer than this. A call still running
 * when the time is up is not cancelled (a plugin cannot be told to stop); its request gets
 * `storage_error` and whatever the call does later is ignored, so a save may still land after its
 * client was told it failed.
 */
import type { Storage } from "../plugin.ts";

/** `storage.timeout` when the config sets none: a storage call waiting longer is failing. */
export const DEFAULT_STORAGE_TIMEOUT_MS = 2_000;

/** What a storage call that ran out of time rejects with. */
export class StorageTimeoutError extends Error {
  constructor(operation: string, timeoutMs: number) {
    super(`storage ${operation} did not finish within storage.timeout (${timeoutMs} ms)`);
    this.name = "StorageTimeoutError";
  }
}

type AsyncMethod<A extends unknown[], R> = (...args: A) => Promise<R>;
/** What a plugin's method may really return: the contract says a promise, JavaScript cannot make it. */
type PluginMethod<A extends unknown[], R> = (...args: A) => R | PromiseLike<R>;

/**
 * How `boundStorage` passes on each `Storage` method: `bound` by the timeout, or `as-is`. Every key
 * of `Storage` must be listed (`satisfies` checks it): a method added to `Storage` later does not
 * compile until it is given a line here, instead of silently missing from the bounded storage.
 */
const PASSING = {
  saveCompletion: "bound",
  getCompletion: "bound",
  listCompletions: "bound",
  updateMetadata: "bound",
  deleteCompletion: "bound",
  saveImage: "bound",
  getImage: "bound",
  addUsage: "bound",
  readUsage: "bound",
  // `GET /readyz` bounds it with its own, shorter deadline (`health/readiness.ts`).
  ready: "as-is",
  // The shutdown has its own deadline.
  close: "as-is",
} as const satisfies Record<keyof Storage, "bound" | "as-is">;

const METHOD_NAMES = Object.keys(PASSING) as Array<keyof typeof PASSING>;

/**
 * The same storage with each call bounded by `timeoutMs`, and the same optional methods: one the
 * plugin lacks stays absent.
 */
export function boundStorage(storage: Storage, timeoutMs: number): Storage {
  function bound<A extends unknown[], R>(operation: string, method: PluginMethod<A, R>): AsyncMethod<A, R> {
    return function boundCall(...args) {
      let pending: Promise<R>;
      try {
        // A method written without `async` may answer with a plain value (or a thenable); the
        // promise of a method that returns one is passed on as it is.
        pending = Promise.resolve(method.apply(storage, args));
      } catch (error) {
        // A throw inside the method is its rejection, as it would be from an `async` method.
        return Promise.reject(error);
      }
      return new Promise<R>((resolve, reject) => {
        const timer = setTimeout(() => reject(new StorageTimeoutError(operation, timeoutMs)), timeoutMs);
        timer.unref();
        // A late rejection lands here too, after the timeout: handled, never an unhandled rejection.
        pending.then(
          (value) => (clearTimeout(timer), resolve(value)),
          (error: unknown) => (clearTimeout(timer), reject(error)),
        );
      });
    };
  }
  const passed: Partial<Record<keyof Storage, (...args: unknown[]) => unknown>> = {};
  for (const name of METHOD_NAMES) {
    const method = storage[name] as ((...args: unknown[]) => unknown) | undefined;
    if (method === undefined) continue;
    passed[name] = PASSING[name] === "bound" ? bound(name, method) : (...args) => method.apply(storage, args);
  }
  // Each method is the plugin's own, wrapped without changing its arguments or its result.
  return passed as Storage;
}
