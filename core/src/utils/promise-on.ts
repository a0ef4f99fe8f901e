/**
 * Promises whose settle functions are kept on the object that settles them, made without a closure
 * per promise: the HTTP client makes one per request and one per waiting read.
 */

/** Settle functions of a promise, kept on the object that will settle it. */
export interface Settlers<T> {
  resolve: ((value: T) => void) | undefined;
  reject: ((error: unknown) => void) | undefined;
}

let capturing: Settlers<never> | undefined;

function capture(resolve: (value: never) => void, reject: (error: unknown) => void): void {
  capturing!.resolve = resolve;
  capturing!.reject = reject;
}

/**
 * A new promise whose settle functions are stored on `holder`. The executor is one module-level
 * function (it runs synchronously), so no closure is made per promise; `Promise.withResolvers`
 * needs Node 22.
 */
export function promiseOn<T>(holder: Settlers<T>): Promise<T> {
  capturing = holder as Settlers<never>;
  const promise = new Promise<T>(capture);
  capturing = undefined;
  return promise;
}
