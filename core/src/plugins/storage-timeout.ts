/**
 * The core's bound on every storage call (`storage.timeout`, README "Storage"): whatever the
 * plugin, a request never waits on its storage longer than this. A call still running when the
 * time is up is not cancelled (a plugin cannot be told to stop); its request gets `storage_error`
 * and whatever the call does later is ignored, so a save may still land after its client was told
 * it failed.
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

/**
 * The same storage with each call bounded by `timeoutMs`. `close` is left unbounded: the shutdown
 * has its own deadline.
 */
export function boundStorage(storage: Storage, timeoutMs: number): Storage {
  function bound<A extends unknown[], R>(operation: string, method: AsyncMethod<A, R>): AsyncMethod<A, R> {
    return function boundCall(...args) {
      let pending: Promise<R>;
      try {
        pending = method.apply(storage, args);
      } catch (error) {
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
  const { saveImage, getImage, close } = storage;
  return {
    saveCompletion: bound("saveCompletion", storage.saveCompletion),
    getCompletion: bound("getCompletion", storage.getCompletion),
    listCompletions: bound("listCompletions", storage.listCompletions),
    updateMetadata: bound("updateMetadata", storage.updateMetadata),
    deleteCompletion: bound("deleteCompletion", storage.deleteCompletion),
    ...(saveImage && getImage && { saveImage: bound("saveImage", saveImage), getImage: bound("getImage", getImage) }),
    ...(close && { close: () => close.call(storage) }),
  };
}
